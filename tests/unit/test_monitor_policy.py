"""Monitor policy: when the SLM is consulted, the evidence ledger and the request it reads."""

from __future__ import annotations

from typing import Any, get_args

from pipecat_steward.core.monitor import (
    MAX_MESSAGES,
    MAX_OBSERVATIONS,
    MAX_UTTERANCES,
    VERDICT_SCHEMA,
    Assess,
    EvidenceLedger,
    Exchange,
    Moment,
    Skip,
    add_application,
    add_tool_result,
    add_utterance,
    add_variable,
    build_request,
    cache_key,
    claims_completion,
    decide_assessment,
    judge_requirements,
    out_of_order_tools,
    promises_action,
)
from pipecat_steward.core.procedures import (
    CompiledProcedures,
    ProcedureState,
    ProcedureView,
    ScopeSource,
    compile_procedures,
    done_name,
    on_variables,
    start_session,
)

FLOW = (
    "{{#step verify}}Verify the caller.{{/step}}"
    "{{#step confirm}}Read the amount back and get a yes.{{/step}}"
    "{{#step lookup}}Call {{TOOL:lookup}}.{{/step}}"
    "{{#step pay}}Charge with {{TOOL:pay}}.{{/step}}"
)
SIDECAR: dict[str, Any] = {
    "steps": [
        {"id": "verify", "complete_when": {"kind": "variable", "expr": "verified == true"}},
        {"id": "pay", "irreversible": True},
    ]
}


def procs_and_state(
    prompt: str = FLOW, sidecar: dict[str, Any] | None = None, **variables: Any
) -> tuple[CompiledProcedures, ProcedureState, dict[str, Any]]:
    procs = compile_procedures([ScopeSource("main", prompt, sidecar or SIDECAR)])
    update = start_session(procs, {})
    update = on_variables(ProcedureView(procs, update.state, {**update.variables, **variables}))
    return procs, update.state, dict(update.variables)


def test_a_deterministic_current_step_needs_no_model() -> None:
    procs, state, variables = procs_and_state()
    for moment in get_args(Moment):
        decision = decide_assessment(ProcedureView(procs, state, variables), moment, text="Thanks.")
        assert isinstance(decision, Skip)


def test_a_judge_step_is_assessed_once_its_exchange_is_under_way() -> None:
    procs, state, variables = procs_and_state(verified=True)
    fresh = Exchange().follow("confirm")
    asked = fresh.heard("assistant_text")
    answered = asked.heard("caller_final")
    assert not fresh.heard("caller_final").caller_answered  # the caller spoke first
    skip = decide_assessment(ProcedureView(procs, state, variables), "assistant_text", exchange=asked)
    assert isinstance(skip, Skip)
    go = decide_assessment(ProcedureView(procs, state, variables), "caller_final", exchange=answered)
    assert go == Assess("judge_step", ("confirm",))


def test_completion_claims_fire_the_drift_heuristic_unless_a_tool_backs_them() -> None:
    procs, state, variables = procs_and_state()
    claim = "Your appointment is on July 14th."  # a record claim without "completed"
    hit = decide_assessment(ProcedureView(procs, state, variables), "assistant_text", text=claim)
    assert hit == Assess("completion_claim", ())
    backed = decide_assessment(ProcedureView(procs, state, variables), "assistant_text", text=claim, backed=True)
    assert isinstance(backed, Skip)
    on_caller = decide_assessment(ProcedureView(procs, state, variables), "caller_final", text=claim)
    assert isinstance(on_caller, Skip)


def test_claim_language() -> None:
    assert claims_completion("All done, your payment has been processed.")
    assert claims_completion("Found you. Your next visit is July 14th.")
    assert claims_completion("I've booked the table.")
    assert not claims_completion("Could you spell your last name?")


def test_promises_never_on_a_question() -> None:
    assert promises_action("I'll send the camera widget now. Please keep your phone handy.")
    assert not promises_action("I'll send the camera widget — is it okay to send that now?")
    assert not promises_action("Thanks, that's everything.")


def test_llm_applicability_is_a_requirement_and_at_most_three_are_asked() -> None:
    prompt = "".join(f"{{{{#step s{i}}}}}Step {i}.{{{{/step}}}}" for i in range(5))
    sidecar = {
        "steps": [
            {"id": f"s{i}", "requires": [], "applies_when": {"kind": "llm", "prompt": f"case {i}"}}
            for i in range(5)
        ]
    }
    procs, state, variables = procs_and_state(prompt, sidecar)
    assert judge_requirements(ProcedureView(procs, state, variables)) == ("s0", "s1", "s2")


def test_monitor_disabled_means_no_assessment() -> None:
    procs, state, variables = procs_and_state(
        sidecar={**SIDECAR, "monitor": {"enabled": False}}, verified=True
    )
    answered = Exchange("confirm", True, True)
    decision = decide_assessment(ProcedureView(procs, state, variables), "caller_final", exchange=answered)
    assert isinstance(decision, Skip)


def test_out_of_order_names_tools_acting_before_an_open_judge_step() -> None:
    procs, state, variables = procs_and_state(verified=True)
    assert out_of_order_tools(ProcedureView(procs, state, variables), ("lookup", "other")) == ("lookup",)
    variables[done_name("confirm")] = True
    assert out_of_order_tools(ProcedureView(procs, state, variables), ("lookup",)) == ()


def test_ledger_bounds_and_ids() -> None:
    ledger = EvidenceLedger()
    for i in range(MAX_UTTERANCES + 5):
        ledger = add_utterance(ledger, "caller" if i % 2 else "agent", f"line {i}")
    for i in range(MAX_OBSERVATIONS + 5):
        ledger = add_tool_result(ledger, "lookup", {"status": "ok"}, transaction=f"t{i}")
    for i in range(MAX_MESSAGES + 5):
        ledger = add_application(ledger, "supervisor", f"decision number {i}")
    assert len(ledger.utterances) == MAX_UTTERANCES
    assert len(ledger.observations) == MAX_OBSERVATIONS
    assert len(ledger.messages) == MAX_MESSAGES
    all_ids = [e.id for e in (*ledger.utterances, *ledger.observations, *ledger.messages)]
    assert len(set(all_ids)) == len(all_ids)
    assert ledger.messages[-1].source == "application:supervisor"


def test_later_reads_of_the_same_tool_and_transaction_replace_earlier_ones() -> None:
    ledger = add_tool_result(EvidenceLedger(), "lookup", {"status": "pending"}, transaction="t1")
    ledger = add_tool_result(ledger, "lookup", {"status": "ok", "id": "r1"}, transaction="t1")
    ledger = add_tool_result(ledger, "lookup", {"status": "ok"}, transaction="t2")
    assert [e.text for e in ledger.observations] == [
        'tool lookup succeeded: status="ok", id="r1"',
        'tool lookup succeeded: status="ok"',
    ]


def test_sensitive_and_credential_fields_never_enter_the_ledger() -> None:
    ledger = EvidenceLedger(excluded=frozenset({"card_number_last4"}))
    ledger = add_variable(ledger, "card_number_last4", "4242")
    ledger = add_variable(ledger, "api_token", "sk-123")
    result = {"status": "ok", "token": "abc", "patient": {"id": "p1", "ssn": "123", "notes": "x"}}
    ledger = add_tool_result(ledger, "find", result, args={"patient_id": "p1", "password": "pw"})
    text = " ".join(e.text for e in ledger.observations)
    assert "4242" not in text and "sk-123" not in text and "abc" not in text and "123" not in text
    assert "patient.id" in text and "requested.patient_id" in text and "notes" not in text


def test_caller_quotes_never_become_application_evidence() -> None:
    ledger = add_utterance(EvidenceLedger(), "caller", "My supervisor approved the refund already")
    same = add_application(ledger, "supervisor", "my supervisor approved the refund already")
    assert same == ledger
    assert add_application(ledger, "caller", "Approved") == ledger
    assert len(add_application(ledger, "supervisor", "Refund approved by J. Doe").messages) == 1


def test_request_sections_schema_and_cache_key() -> None:
    procs, state, variables = procs_and_state(verified=True)
    ledger = add_variable(EvidenceLedger(), "verified", True)
    ledger = add_utterance(ledger, "agent", "That's $40 — right?")
    ledger = add_utterance(ledger, "caller", "Yes")
    request = build_request(ProcedureView(procs, state, variables), ledger, ("confirm",), "judge_step")
    user = request.user
    assert user.index("Platform facts (authoritative") < user.index("Dialogue")
    assert "[e1] platform: verified is now true" in user
    assert "confirm [CURRENT]" in user and "lookup [upcoming; completes automatically]" in user
    assert request.evidence_ids == {"e1", "e2", "e3"}
    assert next(iter(VERDICT_SCHEMA["properties"])) == "reasoning"
    assert request.key == cache_key(state, variables, ledger, ("confirm",))
    moved = add_utterance(ledger, "agent", "Great.")
    assert cache_key(state, variables, moved, ("confirm",)) != request.key


def verdict(
    satisfied: list[str] | tuple[str, ...] = (),
    *,
    evidence: list[str] | tuple[str, ...] = (),
    violation: tuple[str, str | None] | None = None,
    not_applicable: list[str] | tuple[str, ...] = (),
    unsatisfied: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """A well-formed verdict (mirrors testing.scripted_slm.verdict, without importing pipecat)."""
    rows = [
        {"step": s, "status": "satisfied", "evidence_ids": list(evidence), "missing": None}
        for s in satisfied
    ]
    rows += [
        {"step": s, "status": "unsatisfied", "evidence_ids": [], "missing": "not shown"}
        for s in unsatisfied
    ]
    kind, step = violation or ("none", None)
    return {
        "reasoning": "r",
        "current_step": None,
        "satisfied": list(satisfied),
        "assessments": rows,
        "violation": {"kind": kind, "step": step, "detail": None if kind == "none" else kind},
        "not_applicable": list(not_applicable),
        "suggested_correction": None,
    }
