"""Supervision that fails safe: unknown applicability, no double charge, order violations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pipecat_steward.core.monitor import Assess, claim_backed, decide_assessment
from pipecat_steward.core.procedures import (
    Allow,
    CompiledProcedures,
    ProcedureState,
    ProcedureView,
    ScopeSource,
    Verdict,
    Veto,
    apply_verdict,
    arm,
    compile_procedures,
    decide_gate,
    disarm,
    enter_topic,
    on_tool_result,
    on_variables,
    procedure_status,
    remember_block,
    start_session,
    step_state,
)

CLINIC = Path(__file__).parents[2] / "bots" / "clinic"
CONFIG: dict[str, Any] = yaml.safe_load((CLINIC / "agent.yaml").read_text())
FOUND = {"status": 200, "data": {"entry": [{"resource": {"id": "pat-1815"}}]}}
CARD = {"status": "rendered", "component": "AppointmentSummary"}


def compile_one(prompt: str, procedure: dict[str, Any] | None = None) -> CompiledProcedures:
    return compile_procedures([ScopeSource("main", prompt, procedure)])


def clinic_ready_to_pay(**variables: Any) -> tuple[CompiledProcedures, Any]:
    procs = compile_one(CONFIG["prompt"], CONFIG["procedure"])
    u = start_session(procs, variables)
    u = on_variables(
        ProcedureView(procs, u.state, {**u.variables, "customer_auth_status": "verified"}),
        ["customer_auth_status"],
    )
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("confirm_identity",)))
    for tool, result in (
        ("find_patient", FOUND),
        ("show_appointment", CARD),
        ("attach_patient_headshot", {"status": "capture_started"}),
    ):
        u = on_tool_result(ProcedureView(procs, u.state, u.variables), tool, result, call_id=tool).update
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("ask_copay",)))
    return procs, u


# --- unknown applicability means the step applies ----------------------------------------------

UNKNOWN_CONDITIONS = [
    "copay_amount > 100",
    "copay_amount >= 100.5",
    "not (copay_amount <= 100)",
    "copay_amount < 0",
    "int(copay_amount) > 100",
    "copay_amount + fee > 100",
    "tier in ['gold', 'vip']",
    "tier not in ['basic']",
    "copay_amount > 100 and tier == 'vip'",
    "copay_amount > 100 or tier == 'vip'",
    "len(items) > 2",
    "account.balance > 0",
    "lambda p: p['copay_amount'] > 100",
    "flagged",
    "not waived",
]


@pytest.mark.parametrize("expr", UNKNOWN_CONDITIONS)
def test_a_step_condition_over_missing_data_is_unknown_and_the_step_applies(expr: str) -> None:
    procs = compile_one(
        "{{#step ask}}Ask.{{/step}}{{#step review}}Review with {{TOOL:review}}.{{/step}}"
        "{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
        {
            "steps": [
                {"id": "ask", "complete_when": {"kind": "variable", "expr": "asked == true"}},
                {"id": "review", "applies_when": {"kind": "code", "expr": expr}},
                {"id": "pay", "irreversible": True},
            ]
        },
    )
    u = start_session(procs, {"asked": True})
    assert step_state(procs.steps["review"], u.variables) == "open"
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "pay")
    assert isinstance(decision, Veto) and [s.id for s in decision.open_steps] == ["review"]


@pytest.mark.parametrize("expr", UNKNOWN_CONDITIONS)
def test_a_group_condition_over_missing_data_is_unknown_and_its_steps_apply(expr: str) -> None:
    procs = compile_one(
        "{{#procedure review}}{{#step approve}}Approve with {{TOOL:approve}}.{{/step}}"
        "{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}{{/procedure}}",
        {
            "groups": {"review": {"applies_when": {"kind": "code", "expr": expr}}},
            "steps": [{"id": "pay", "irreversible": True}],
        },
    )
    u = start_session(procs, {})
    assert step_state(procs.steps["approve"], u.variables) == "open"
    assert u.variables["proc_current_step"] == "approve"
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "pay")
    assert isinstance(decision, Veto) and [s.id for s in decision.open_steps] == ["approve"]


def test_a_known_false_condition_still_makes_the_step_not_applicable() -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    assert step_state(procs.steps["review_copay"], u.variables) == "not_applicable"
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment"), Allow)


@pytest.mark.parametrize("expr", ["exists(code)", "code != null", "lambda p: p.get('n', 0) > 1"])
def test_a_condition_that_tests_for_missing_data_decides_by_its_own_words(expr: str) -> None:
    procs = compile_one(
        "{{#step a}}A with {{TOOL:a}}.{{/step}}",
        {"steps": [{"id": "a", "applies_when": {"kind": "code", "expr": expr}}]},
    )
    assert step_state(procs.steps["a"], {}) == "not_applicable"


def test_the_clinic_review_gates_a_payment_while_the_copay_is_unknown() -> None:
    procs, u = clinic_ready_to_pay()  # billing never set copay_amount
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(decision, Veto)
    assert [s.id for s in decision.open_steps] == ["review_copay"]


# --- no double charge -------------------------------------------------------------------------

RECEIPT = {"status": "succeeded", "receipt": "rcpt-pat-1815-40.00"}


def test_a_completed_irreversible_step_vetoes_a_repeat_and_names_the_earlier_result() -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment"), Allow)
    paid = on_tool_result(ProcedureView(procs, u.state, u.variables), "collect_payment", RECEIPT).update
    again = decide_gate(ProcedureView(procs, paid.state, paid.variables), "collect_payment")
    assert isinstance(again, Veto) and again.reason == "already_done"
    assert [s.id for s in again.open_steps] == ["take_payment"]
    assert "rcpt-pat-1815-40.00" in again.message() and "already done" in again.message()
    assert again.result()["earlier_result"] == again.earlier
    restored = ProcedureState.from_dict(paid.state.to_dict())
    assert restored == paid.state  # the receipt survives a checkpoint
    assert isinstance(decide_gate(ProcedureView(procs, restored, paid.variables), "collect_payment"), Veto)
    assert remember_block(paid.state, again) == paid.state  # no "you may resume" later


def _visit_a_topic(procs: CompiledProcedures, u: Any) -> Any:
    there = arm(ProcedureView(procs, u.state, u.variables), "billing")
    return disarm(ProcedureView(procs, there.state, there.variables), "billing")


MOVES = {
    "re-arming the main scope": lambda procs, u: arm(ProcedureView(procs, u.state, u.variables), "main"),
    "entering a topic": lambda procs, u: enter_topic(ProcedureView(procs, u.state, u.variables), "billing"),
    "leaving a topic": _visit_a_topic,
}


@pytest.mark.parametrize("move", MOVES.values(), ids=list(MOVES))
def test_a_scope_change_keeps_the_earlier_result_a_repeat_veto_names(move: Any) -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    paid = on_tool_result(ProcedureView(procs, u.state, u.variables), "collect_payment", RECEIPT).update
    moved = move(procs, paid)
    again = decide_gate(ProcedureView(procs, moved.state, moved.variables), "collect_payment")
    assert isinstance(again, Veto) and again.reason == "already_done"
    assert again.earlier is not None and "rcpt-pat-1815-40.00" in again.earlier


@pytest.mark.parametrize("tool_result", [RECEIPT, {"status": "ok"}, {"success": True}, "charged"])
def test_a_repeatable_irreversible_step_allows_its_tool_again(tool_result: object) -> None:
    procs = compile_one(
        "{{#step ask}}Ask.{{/step}}{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
        {
            "steps": [
                {"id": "ask", "complete_when": {"kind": "variable", "expr": "asked == true"}},
                {"id": "pay", "irreversible": True, "repeatable": True},
            ]
        },
    )
    once = compile_one(
        "{{#step ask}}Ask.{{/step}}{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
        {
            "steps": [
                {"id": "ask", "complete_when": {"kind": "variable", "expr": "asked == true"}},
                {"id": "pay", "irreversible": True},
            ]
        },
    )
    for compiled, repeat_allowed in ((procs, True), (once, False)):
        u = start_session(compiled, {"asked": True})
        u = on_tool_result(ProcedureView(compiled, u.state, u.variables), "pay", tool_result).update
        decision = decide_gate(ProcedureView(compiled, u.state, u.variables), "pay")
        assert isinstance(decision, Allow) is repeat_allowed


def test_leaving_and_re_entering_a_topic_re_arms_its_irreversible_step() -> None:
    procs = compile_procedures(
        [
            ScopeSource("main", "Hello."),
            ScopeSource(
                "billing",
                "{{#step a}}A.{{/step}}{{#step pay}}{{TOOL:pay}}{{/step}}",
                {
                    "steps": [
                        {"id": "a", "complete_when": {"kind": "variable", "expr": "ok == true"}},
                        {"id": "pay", "irreversible": True},
                    ]
                },
            ),
        ]
    )
    u = enter_topic(ProcedureView(procs, start_session(procs, {"ok": True}).state, {"ok": True}), "billing")
    u = on_tool_result(ProcedureView(procs, u.state, u.variables), "pay", RECEIPT).update
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), Veto)
    u = disarm(ProcedureView(procs, u.state, u.variables), "billing")
    u = enter_topic(ProcedureView(procs, u.state, u.variables), "billing")
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), Allow)


# --- hallucinated progress ---------------------------------------------------------------------


def test_a_deterministic_step_done_out_of_order_is_the_last_violation() -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    summary = on_tool_result(ProcedureView(procs, u.state, u.variables), "send_visit_summary", {"status": "sent"})
    violation = summary.update.state.last_violation("scope:main")
    assert (
        violation is not None and violation.kind == "skipped_step" and violation.step == "summary"
    )
    assert "Take the copay" in violation.detail
    status: Any = procedure_status(ProcedureView(procs, summary.update.state, summary.update.variables))
    assert status["procedures"][0]["last_violation"]["step"] == "summary"
    paid = on_tool_result(ProcedureView(procs, u.state, u.variables), "collect_payment", RECEIPT)
    assert paid.update.state.last_violation("scope:main") is None  # in order: nothing recorded


CLAIMS_AFTER_SUMMARY = [
    ("Your copay has been charged.", False),
    ("All done, the payment went through.", False),
    ("I've charged the copay to your card.", False),
    ("Your visit summary has been sent.", True),
]


@pytest.mark.parametrize(("claim", "backed"), CLAIMS_AFTER_SUMMARY)
def test_a_claim_is_backed_only_by_the_tool_that_completes_the_claimed_step(
    claim: str, backed: bool
) -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    after = on_tool_result(
        ProcedureView(procs, u.state, u.variables), "send_visit_summary", {"status": "sent"}
    ).update
    assert (
        claim_backed(ProcedureView(procs, after.state, after.variables), claim, ("send_visit_summary",)) is backed
    )
    decision = decide_assessment(
        ProcedureView(procs, after.state, after.variables),
        "assistant_text",
        text=claim,
        backed=claim_backed(ProcedureView(procs, after.state, after.variables), claim, ("send_visit_summary",)),
    )
    assert isinstance(decision, Assess) is not backed


def test_the_completing_tool_backs_its_claim() -> None:
    procs, u = clinic_ready_to_pay(copay_amount=40)
    paid = on_tool_result(ProcedureView(procs, u.state, u.variables), "collect_payment", RECEIPT).update
    assert claim_backed(
        ProcedureView(procs, paid.state, paid.variables), "Your copay has been charged.", ("collect_payment",)
    )
    assert claim_backed(ProcedureView(procs, paid.state, paid.variables), "All set!", ("collect_payment",))
    assert not claim_backed(ProcedureView(procs, u.state, u.variables), "All set!", ())
