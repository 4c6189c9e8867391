"""bots/clinic through the procedure APIs: the clinic appointments flow, gated payment."""

from __future__ import annotations

import copy
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipecat_steward.core.procedures import (
    CURRENT_STEP,
    Allow,
    AwaitJudge,
    CompiledProcedures,
    FailMode,
    ProcedureState,
    ProcedureUpdate,
    ProcedureView,
    ScopeSource,
    ToolOutcome,
    Verdict,
    Veto,
    apply_verdict,
    compile_procedures,
    decide_gate,
    describe_tool,
    done_name,
    on_tool_result,
    on_variables,
    procedure_status,
    remember_block,
    resolve_timeout,
    start_session,
)

CLINIC = Path(__file__).parents[2] / "bots" / "clinic"
CONFIG: dict[str, Any] = yaml.safe_load((CLINIC / "agent.yaml").read_text())
FOUND = {"status": 200, "data": {"entry": [{"resource": {"id": "pat-1815"}}]}}
EMPTY = {"status": 200, "data": {"resourceType": "Bundle", "total": 0, "entry": []}}
CARD = {"status": "rendered", "component": "AppointmentSummary"}


def clinic(procedure: dict[str, Any] | None = None) -> CompiledProcedures:
    procs = compile_procedures([ScopeSource("main", CONFIG["prompt"], procedure or CONFIG["procedure"])])
    assert procs.issues == ()
    return procs


def session(procs: CompiledProcedures, **variables: Any) -> ProcedureUpdate:
    return start_session(procs, variables)


def verify(procs: CompiledProcedures, u: ProcedureUpdate) -> ProcedureUpdate:
    written = {**u.variables, "customer_auth_status": "verified"}
    return on_variables(ProcedureView(procs, u.state, written), ["customer_auth_status"])


def through_headshot(procs: CompiledProcedures, **variables: Any) -> ProcedureUpdate:
    variables.setdefault("copay_amount", 40)  # billing knows a small copay: no review applies
    u = verify(procs, session(procs, **variables))
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("confirm_identity",)))
    for tool, result in (
        ("find_patient", FOUND),
        ("show_appointment", CARD),
        ("attach_patient_headshot", {"status": "capture_started"}),
    ):
        u = on_tool_result(ProcedureView(procs, u.state, u.variables), tool, result, call_id=tool).update
    return u


def test_just_charge_me_now_is_vetoed_with_the_recovery_guidance() -> None:
    procs = clinic()
    u = session(procs)
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(decision, Veto)
    assert [s.id for s in decision.open_steps] == [
        "authenticate",
        "confirm_identity",
        "lookup_patient",
        "confirm_appointment",
        "headshot",
        "ask_copay",
        "review_copay",  # the copay is unknown yet, so its review applies
    ]
    assert decision.next_step is not None and decision.next_step.id == "authenticate"
    assert decision.guidance is not None and decision.guidance.startswith(
        "Ask for the caller's full name and date of birth, then call authenticate_patient"
    )
    result = decision.result()
    assert result["status"] == "blocked" and result["success"] is False
    assert "Authenticate the caller" in str(result["error"])
    assert u.variables[done_name("take_payment")] is False  # nothing ran, nothing completed


def test_the_veto_guidance_comes_from_the_next_ready_prerequisite() -> None:
    procs = clinic()
    u = verify(procs, session(procs))
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(decision, Veto) and decision.next_step is not None
    assert decision.next_step.id == "confirm_identity"
    assert "authenticate" not in [s.id for s in decision.open_steps]


def test_an_empty_lookup_leaves_the_step_open_and_numbers_the_empty_result() -> None:
    procs = clinic()
    u = apply_verdict(ProcedureView(procs, *_after_auth(procs)), Verdict(satisfied=("confirm_identity",)))
    first = on_tool_result(ProcedureView(procs, u.state, u.variables), "find_patient", EMPTY, call_id="c1")
    assert first.outcomes == (("lookup_patient", ToolOutcome.EMPTY),)
    assert first.update.variables[done_name("lookup_patient")] is False
    assert first.update.variables[CURRENT_STEP] == "lookup_patient"
    assert first.note is not None
    assert "no matching record (empty result #1 this visit)" in first.note
    assert "retry once" in first.note and "never invent a record" in first.note
    again = on_tool_result(ProcedureView(procs, first.update.state, first.update.variables), "find_patient", EMPTY, call_id="c1")
    assert again.note is not None and "#1 this visit" in again.note  # the same callback, the same number
    second = on_tool_result(ProcedureView(procs, again.update.state, again.update.variables), "find_patient", EMPTY, call_id="c2")
    assert second.note is not None and "#2 this visit" in second.note
    found = on_tool_result(ProcedureView(procs, second.update.state, second.update.variables), "find_patient", FOUND, call_id="c3")
    assert found.update.variables[done_name("lookup_patient")] is True
    assert found.note is not None and found.note.startswith("Next step — Confirm the appointment:")


def _after_auth(procs: CompiledProcedures) -> tuple[ProcedureState, dict[str, Any]]:
    u = verify(procs, session(procs))
    return u.state, dict(u.variables)


def test_the_gate_path_makes_no_network_call(monkeypatch: pytest.MonkeyPatch) -> None:
    procs = clinic()
    u = through_headshot(procs)

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the gate path opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for variables in (session(procs).variables, u.variables):
        decision = decide_gate(ProcedureView(procs, u.state, variables), "collect_payment")
        assert isinstance(decision, Veto | AwaitJudge)


def test_a_judge_prerequisite_without_a_verdict_waits_then_closed_payment_vetoes() -> None:
    procs = clinic()
    u = through_headshot(procs)
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(decision, AwaitJudge)
    assert decision.steps == ("ask_copay",)
    assert (decision.fail_mode, decision.timeout_s) == (FailMode.CLOSED, 8.0)
    timed_out = resolve_timeout(decision)
    assert isinstance(timed_out, Veto) and timed_out.reason == "judge_timeout"
    assert "could not be confirmed in time" in timed_out.message()


def test_a_step_set_open_allows_on_timeout_and_logs() -> None:
    procedure = copy.deepcopy(CONFIG["procedure"])
    for step in procedure["steps"]:
        if step["id"] == "take_payment":
            step["irreversible_fail_mode"] = "open"
    procs = clinic(procedure)
    decision = decide_gate(ProcedureView(procs, *_state(through_headshot(procs))), "collect_payment")
    assert isinstance(decision, AwaitJudge) and decision.fail_mode is FailMode.OPEN
    allowed = resolve_timeout(decision)
    assert isinstance(allowed, Allow)
    assert allowed.log is not None and "ask_copay" in allowed.log and "open" in allowed.log


def _state(u: ProcedureUpdate) -> tuple[ProcedureState, Any]:
    return u.state, u.variables


def test_a_verdict_settles_the_judge_prerequisite_and_payment_is_allowed() -> None:
    procs = clinic()
    u = through_headshot(procs)
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("ask_copay",)))
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment"), Allow)


def test_the_copay_review_branch_binds_only_when_it_applies() -> None:
    procs = clinic()
    u = through_headshot(procs, copay_amount=180)
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("ask_copay",)))
    decision = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(decision, Veto) and [s.id for s in decision.open_steps] == ["review_copay"]
    assert decision.guidance is not None and decision.guidance.startswith("Copays over $100")
    cheap = through_headshot(procs, copay_amount=20)
    cheap = apply_verdict(ProcedureView(procs, cheap.state, cheap.variables), Verdict(satisfied=("ask_copay",)))
    assert isinstance(decide_gate(ProcedureView(procs, cheap.state, cheap.variables), "collect_payment"), Allow)


def test_a_blocked_payment_is_remembered_and_one_resume_note_follows() -> None:
    procs = clinic()
    u = through_headshot(procs, copay_amount=180)
    u = apply_verdict(ProcedureView(procs, u.state, u.variables), Verdict(satisfied=("ask_copay",)))
    veto = decide_gate(ProcedureView(procs, u.state, u.variables), "collect_payment")
    assert isinstance(veto, Veto)
    state = remember_block(u.state, veto)
    assert [b.tool for b in state.blocked] == ["collect_payment"]
    review = on_tool_result(ProcedureView(procs, state, u.variables), "request_copay_review", {"status": "approved"})
    assert review.note is not None
    assert "You may now resume collect_payment" in review.note
    assert review.update.state.blocked == ()
    later = on_tool_result(ProcedureView(procs, review.update.state, review.update.variables), "request_copay_review", {"status": "approved"})
    assert later.note is None or "resume" not in later.note  # one note, never repeated


def test_tool_descriptions_advertise_the_prerequisite_titles() -> None:
    text = describe_tool(clinic(), "collect_payment", "Charge the copay.")
    assert text.startswith("Charge the copay. Only after these steps are complete: Authenticate the caller;")
    assert "Billing review of a large copay" in text
    assert describe_tool(clinic(), "find_patient", "Search.") == "Search."


def test_a_card_from_another_component_does_not_confirm_the_appointment() -> None:
    procs = clinic()
    u = through_headshot(procs)
    assert u.variables[done_name("confirm_appointment")] is True
    fresh = apply_verdict(ProcedureView(procs, *_state(verify(procs, session(procs)))), Verdict(satisfied=("confirm_identity",)))
    fresh = on_tool_result(ProcedureView(procs, fresh.state, fresh.variables), "find_patient", FOUND).update
    other = on_tool_result(ProcedureView(procs, fresh.state, fresh.variables), "show_appointment", {"status": "rendered", "component": "Card"})
    assert other.update.variables[done_name("confirm_appointment")] is False


def test_the_checklist_status_payload() -> None:
    procs = clinic()
    u = verify(procs, session(procs, copay_amount=40))
    status: Any = procedure_status(ProcedureView(procs, u.state, u.variables))
    assert status["type"] == "procedure_status" and status["current_step"] == "confirm_identity"
    [checklist] = status["procedures"]
    rows = {r["id"]: r for r in checklist["steps"]}
    assert rows["authenticate"]["state"] == "done"
    assert rows["review_copay"]["state"] == "not_applicable"
    assert rows["confirm_identity"]["current"] is True
    assert rows["take_payment"]["active_in"] == ["main"]
    assert checklist["last_violation"] is None
