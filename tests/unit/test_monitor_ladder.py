"""The correction ladder and the promise watchdog (pure, times as parameters)."""

from __future__ import annotations

from dataclasses import replace

from tests.unit.test_monitor_policy import SIDECAR, procs_and_state

from pipecat_steward.core.monitor import (
    NOTE_TTL_S,
    PROMISE_WAIT_S,
    Deliver,
    LadderState,
    Observe,
    Watchdog,
    arm_watchdog,
    disarm_watchdog,
    fire_watchdog,
    on_finding,
    played_out,
    take_due,
)
from pipecat_steward.core.procedures import (
    ProcedureView,
    ProcedureViolation,
    done_name,
    enter_topic,
)
from pipecat_steward.core.procedures.model import Severity

PROCS, STATE, VARS = procs_and_state(verified=True)
SKIP = ProcedureViolation("skipped_step", "confirm", "moved on without the read-back")


def climb(
    ladder: LadderState,
    violation: ProcedureViolation | None,
    now: float = 0.0,
    procs=PROCS,
    state=STATE,
    variables=VARS,
):
    return on_finding(ladder, violation, ProcedureView(procs, state, variables), now)


def test_a_violation_needs_the_same_finding_on_two_consecutive_checks() -> None:
    ladder, first = climb(LadderState(), SKIP)
    assert first == Observe("needs the same finding on the next check")
    ladder, second = climb(ladder, SKIP, 1.0)
    assert isinstance(second, Deliver) and second.when == "queued"
    assert second.correction.severity is Severity.NOTE
    assert second.correction.expires_at == 1.0 + NOTE_TTL_S


def test_a_clean_check_in_between_breaks_corroboration() -> None:
    ladder, _ = climb(LadderState(), SKIP)
    ladder, _ = climb(ladder, None)
    _, outcome = climb(ladder, SKIP)
    assert isinstance(outcome, Observe)


def test_off_procedure_is_recorded_never_corrected() -> None:
    off = ProcedureViolation("off_procedure", None, "chatting about the weather")
    ladder, _ = climb(LadderState(), off)
    _, outcome = climb(ladder, off)
    assert outcome == Observe("off_procedure is recorded, never corrected")


def test_budget_zero_observes_only() -> None:
    sidecar = {**SIDECAR, "monitor": {"max_corrections_per_step": 0}}
    procs, state, variables = procs_and_state(sidecar=sidecar, verified=True)
    ladder, _ = climb(LadderState(), SKIP, procs=procs, state=state, variables=variables)
    _, outcome = climb(ladder, SKIP, procs=procs, state=state, variables=variables)
    assert outcome == Observe("observe only")


def test_one_correction_per_turn_identical_never_reissued_and_budget_spent() -> None:
    ladder, _ = climb(LadderState(), SKIP)
    ladder, _ = climb(ladder, SKIP)
    ladder, note = take_due(ladder, ProcedureView(PROCS, STATE, VARS), 2.0)
    assert note is not None and note.text.startswith("[Procedure check]")
    ladder, again = take_due(ladder, ProcedureView(PROCS, STATE, VARS), 3.0)
    assert again is None
    ladder, _ = climb(ladder, SKIP)
    _, outcome = climb(ladder, SKIP)
    assert outcome == Observe("correction budget spent")


def test_queued_notes_expire_after_sixty_seconds() -> None:
    ladder, _ = climb(LadderState(), SKIP)
    ladder, _ = climb(ladder, SKIP, 10.0)
    ladder, note = take_due(ladder, ProcedureView(PROCS, STATE, VARS), 10.0 + NOTE_TTL_S + 0.1)
    assert note is None and ladder.queue == ()


def test_delivery_rechecks_live_state_and_leaving_a_topic_invalidates() -> None:
    ladder, _ = climb(LadderState(), SKIP)
    ladder, _ = climb(ladder, SKIP)
    done = {**VARS, done_name("confirm"): True}
    assert take_due(ladder, ProcedureView(PROCS, STATE, done), 1.0)[1] is None
    moved = replace(STATE, visit=STATE.visit + 1)
    assert take_due(ladder, ProcedureView(PROCS, moved, VARS), 1.0)[1] is None
    assert take_due(ladder, ProcedureView(PROCS, STATE, VARS), 1.0)[1] is not None


def test_a_hallucinated_completion_of_an_unfired_irreversible_step_is_severe() -> None:
    procs, state, variables = procs_and_state(verified=True)
    variables = {**variables, done_name("confirm"): True, done_name("lookup"): True}
    claim = ProcedureViolation("hallucination", "pay", "said the card was charged")
    ladder, _ = climb(LadderState(), claim, procs=procs, state=state, variables=variables)
    ladder, outcome = climb(ladder, claim, procs=procs, state=state, variables=variables)
    assert isinstance(outcome, Deliver) and outcome.when == "now"
    assert outcome.correction.severity is Severity.SEVERE
    assert ladder.spent_on("pay") == 1


def test_a_finding_on_a_completed_step_corrects_nothing() -> None:
    variables = {**VARS, done_name("confirm"): True}
    ladder, _ = climb(LadderState(), SKIP, variables=variables)
    _, outcome = climb(ladder, SKIP, variables=variables)
    assert outcome == Observe("step is no longer open")


def tool_step_state():
    procs, state, variables = procs_and_state(verified=True)
    return procs, state, {**variables, done_name("confirm"): True}  # current: lookup (a tool)


def test_the_watchdog_nudges_once_after_four_seconds() -> None:
    procs, state, variables = tool_step_state()
    wd = arm_watchdog(Watchdog(), ProcedureView(procs, state, variables), "I'll look that up now.", 10.0)
    assert wd.armed and wd.deadline == 10.0 + PROMISE_WAIT_S
    wd = played_out(wd, 12.0)  # playout ended later: count from there
    assert fire_watchdog(wd, ProcedureView(procs, state, variables), 14.5)[1] is None
    wd, nudge = fire_watchdog(wd, ProcedureView(procs, state, variables), 16.0)
    assert nudge is not None and nudge.step == "lookup" and nudge.severity is Severity.NUDGE
    assert nudge.kind is None and "nothing ran" in nudge.text
    assert (nudge.created_at, nudge.expires_at, nudge.visit) == (
        16.0,
        16.0 + NOTE_TTL_S,
        state.visit,
    )
    again = arm_watchdog(wd, ProcedureView(procs, state, variables), "I'll look that up now.", 20.0)
    assert not again.armed  # one nudge per step


def test_the_watchdog_never_arms_on_a_question_or_a_judge_step_and_disarms() -> None:
    procs, state, variables = tool_step_state()
    asked = arm_watchdog(Watchdog(), ProcedureView(procs, state, variables), "Shall I look that up?", 0.0)
    assert not asked.armed
    judge_vars = procs_and_state(verified=True)[2]
    assert not arm_watchdog(Watchdog(), ProcedureView(procs, state, judge_vars), "I'll check.", 0.0).armed
    wd = arm_watchdog(Watchdog(), ProcedureView(procs, state, variables), "Let me pull up your file.", 0.0)
    assert fire_watchdog(disarm_watchdog(wd), ProcedureView(procs, state, variables), 99.0)[1] is None


def test_entering_a_topic_bumps_the_visit() -> None:
    update = enter_topic(ProcedureView(PROCS, STATE, VARS), "billing")
    assert update.state.visit != STATE.visit
