"""Verdict checks: the model proposes, code decides."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.test_monitor_policy import procs_and_state, verdict

from pipecat_steward.core.monitor import (
    Checked,
    Discarded,
    EvidenceLedger,
    add_utterance,
    build_request,
    check_verdict,
)
from pipecat_steward.core.procedures import ProcedureView, ProcedureViolation

PROCS, STATE, VARS = procs_and_state(verified=True)
LEDGER = add_utterance(add_utterance(EvidenceLedger(), "agent", "$40 — ok?"), "caller", "Yes")
REQUEST = build_request(ProcedureView(PROCS, STATE, VARS), LEDGER, ("confirm",), "judge_step")


def check(raw: dict[str, Any]) -> Checked | Discarded:
    return check_verdict(raw, REQUEST, PROCS, VARS)


def test_a_cited_satisfied_assessment_completes_the_step() -> None:
    result = check(verdict(["confirm"], evidence=["e1", "e2"]))
    assert isinstance(result, Checked) and result.verdict.satisfied == ("confirm",)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (verdict(["confirm_identity"], evidence=["e2"]), "undeclared step 'confirm_identity'"),
        (verdict(["confirm"], evidence=["e17"]), "unknown evidence id 'e17'"),
        (verdict(violation=("skipped_step", "ghost")), "undeclared step 'ghost'"),
        ({"satisfied": "confirm"}, "malformed"),
        ({}, "malformed"),
    ],
)
def test_invented_steps_evidence_and_garbage_void_the_whole_verdict(
    raw: dict[str, Any], why: str
) -> None:
    result = check(raw)
    assert isinstance(result, Discarded) and why in result.why


def test_satisfied_needs_a_satisfied_assessment_with_evidence() -> None:
    bare = {**verdict(), "satisfied": ["confirm"]}  # no assessment at all
    no_ids = verdict(["confirm"])  # an assessment citing nothing
    for raw in (bare, no_ids):
        result = check(raw)
        assert isinstance(result, Checked)
        assert result.verdict.satisfied == () and result.unknown == ("confirm",)


def test_contradictions_are_unknown() -> None:
    both = verdict(["confirm"], evidence=["e2"], unsatisfied=["confirm"])
    result = check(both)
    assert isinstance(result, Checked) and result.verdict.satisfied == ()
    violated = verdict(["confirm"], evidence=["e2"], violation=("skipped_step", "confirm"))
    result = check(violated)
    assert isinstance(result, Checked) and result.verdict.violation is None


def test_prerequisites_are_checked_again_and_only_requested_judge_steps_count() -> None:
    procs, state, variables = procs_and_state()  # verify (a prerequisite) still open
    request = build_request(ProcedureView(procs, state, variables), LEDGER, ("confirm",), "gate")
    result = check_verdict(verdict(["confirm"], evidence=["e2"]), request, procs, variables)
    assert isinstance(result, Checked) and result.verdict.satisfied == ()
    lookup = check(verdict(["lookup"], evidence=["e2"]))  # deterministic, not requested
    assert isinstance(lookup, Checked) and lookup.verdict.satisfied == ()


def test_not_applicable_only_for_llm_conditions_and_violations_pass_through() -> None:
    result = check(verdict(not_applicable=["confirm"], violation=("off_procedure", None)))
    assert isinstance(result, Checked)
    assert result.verdict.not_applicable == ()
    assert result.verdict.violation == ProcedureViolation("off_procedure", None, "off_procedure")
