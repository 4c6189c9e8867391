"""Pre-validation, deterministic confirmation, idempotent execution and crash replay, plus the
diagnosis of inconsistent restored states."""

from __future__ import annotations

from typing import Any

import pytest
from tests.storage_support.intents import AT, CANCEL, CONTEST, SCOPE, catalog, turn

from pipecat_steward.core.transactions import (
    CONFIRMATION_TOOLS,
    AskLLM,
    Confirm,
    ConfirmedByCode,
    Correct,
    Diagnosis,
    ExecutorCall,
    InconsistentTransactionState,
    Reject,
    Transaction,
    TransactionState,
    TransactionStatus,
    Unclear,
    apply_confirmation,
    confirm,
    confirmation_gate,
    confirmation_text,
    diagnose,
    idempotency_key,
    mark_reported,
    pending_execution,
    pre_validation_call,
    record_pre_validation,
    record_result,
    recorded_outcome,
    reset_inconsistent,
    route_confirmation,
    route_turn,
    start,
    unreported_outcome,
)
from pipecat_steward.exceptions import StateError

S = TransactionStatus
CAT = catalog()
LATER = "2030-01-01T10:05:00Z"


def awaiting(**args: Any) -> TransactionState:
    return start(CAT, TransactionState(), CONTEST, {"subject": "gym", "amount": "71.99", **args}, at=AT)


def executing() -> TransactionState:
    return confirm(awaiting(), scope=SCOPE, at=LATER)


def test_pre_validation_runs_the_task_then_confirms_or_goes_out_of_scope() -> None:
    state = start(CAT, TransactionState(), CANCEL, {"order_id": "PED-1"}, at=AT)
    assert pre_validation_call(CAT, state) == ExecutorCall("check_cancellable", {"order_id": "PED-1"})
    ok = record_pre_validation(state, eligible=True, result={"eligible": True}, at=AT)
    assert ok.transaction_status == S.AWAITING_CONFIRMATION
    assert ok.active_transaction.evidence.pre_validation == {"eligible": True}  # type: ignore[union-attr]
    out = record_pre_validation(state, eligible=False, result={"reason": "shipped"}, at=AT)
    assert out.active_transaction is None and out.transaction_status == S.OUT_OF_SCOPE
    assert out.last_transaction.evidence.pre_validation == {"reason": "shipped"}  # type: ignore[union-attr]
    assert pre_validation_call(CAT, ok) is None


def test_confirmation_text_is_rendered_by_code_from_the_canonical_arguments() -> None:
    assert confirmation_text(CAT, awaiting()) == "Contest the gym charge of 71.99?"


@pytest.mark.parametrize("answer", ["yes", "Yes, that's correct.", "sure", "ok"])
def test_a_pure_affirmative_confirms_without_the_llm(answer: str) -> None:
    assert confirmation_gate(awaiting(), answer) == ConfirmedByCode()


@pytest.mark.parametrize("answer", ["yes but make it 80", "no", "wait", "what was the amount again?"])
def test_anything_else_goes_to_the_llm_with_only_confirmation_tools(answer: str) -> None:
    gate = confirmation_gate(awaiting(), answer)
    assert gate == AskLLM()
    assert isinstance(gate, AskLLM) and gate.tools == CONFIRMATION_TOOLS


def test_route_confirmation_reads_confirm_reject_and_correct() -> None:
    state = awaiting()
    use = lambda *calls: turn("", *calls).calls  # noqa: E731
    assert route_confirmation(CAT, state, use(("confirm_transaction", {}))) == Confirm()
    assert route_confirmation(CAT, state, use(("reject_transaction", {}))) == Reject()
    correction = use(("correct_transaction", {"parameter": "amount", "value": "80"}))
    assert route_confirmation(CAT, state, correction) == Correct({"amount": "80"})
    assert route_confirmation(CAT, state, use(("set_order_id", {"order_id": "x"}))) == Unclear()


def test_a_correction_merges_and_asks_the_new_confirmation() -> None:
    state = apply_confirmation(CAT, awaiting(), Correct({"amount": "80"}), scope=SCOPE, at=AT)
    assert state.transaction_status == S.AWAITING_CONFIRMATION
    assert confirmation_text(CAT, state) == "Contest the gym charge of 80?"


def test_reject_cancels_and_releases_the_latch() -> None:
    state = apply_confirmation(CAT, awaiting(), Reject(), scope=SCOPE, at=AT)
    assert state.active_transaction is None and state.last_transaction.status == S.CANCELLED  # type: ignore[union-attr]


def test_confirm_writes_the_key_and_evidence_before_any_executor_call() -> None:
    state = apply_confirmation(CAT, awaiting(), ConfirmedByCode(), scope=SCOPE, at=LATER)
    txn = state.active_transaction
    assert txn is not None and txn.status == S.EXECUTING
    key = idempotency_key(SCOPE, CONTEST, 1, {"subject": "gym", "amount": "71.99"})
    assert txn.idempotency_key == key
    assert txn.evidence.confirmed_at == LATER and txn.evidence.ok is None
    assert pending_execution(CAT, state) == ExecutorCall("contest_charge", {"subject": "gym", "amount": "71.99"}, key)


def test_idempotency_keys_are_deterministic_and_distinct() -> None:
    args = {"order_id": "PED-1"}
    assert idempotency_key("a/b/c", CANCEL, 1, args) == idempotency_key("a/b/c", CANCEL, 1, dict(args))
    others = {
        idempotency_key("a/b/d", CANCEL, 1, args),
        idempotency_key("a/b/c", CANCEL, 2, args),
        idempotency_key("a/b/c", CANCEL, 1, {"order_id": "PED-2"}),
        idempotency_key("a/b/c", CONTEST, 1, args),
    }
    assert len(others) == 4 and idempotency_key("a/b/c", CANCEL, 1, args) not in others


def test_record_result_completes_with_evidence_and_the_first_outcome_stands() -> None:
    state = executing()
    key = state.active_transaction.idempotency_key  # type: ignore[union-attr]
    assert key is not None
    done = record_result(state, key=key, ok=True, result={"ticket": "C-9"}, at=LATER)
    assert done.active_transaction is None and done.transaction_status == S.COMPLETED
    evidence = done.last_transaction.evidence  # type: ignore[union-attr]
    assert (evidence.result, evidence.ok, evidence.executed_at) == ({"ticket": "C-9"}, True, LATER)
    assert evidence.arguments == {"subject": "gym", "amount": "71.99"}
    again = record_result(done, key=key, ok=False, result={"error": True}, at=LATER)
    assert again == done
    assert recorded_outcome(done, key) == evidence
    assert pending_execution(CAT, done) is None


def test_a_failed_executor_ends_failed() -> None:
    state = executing()
    key = state.active_transaction.idempotency_key or ""  # type: ignore[union-attr]
    failed = record_result(state, key=key, ok=False, result={"error_code": "timeout"}, at=LATER)
    assert failed.transaction_status == S.FAILED and failed.last_transaction.evidence.ok is False  # type: ignore[union-attr]


def test_a_result_under_a_foreign_key_is_refused() -> None:
    with pytest.raises(StateError, match="executes under"):
        record_result(executing(), key="other", ok=True, result={}, at=LATER)


def test_the_outcome_is_reported_once_after_a_resume() -> None:
    state = executing()
    key = state.active_transaction.idempotency_key or ""  # type: ignore[union-attr]
    done = TransactionState.from_json(record_result(state, key=key, ok=True, result={}, at=LATER).to_json())
    assert unreported_outcome(done) == done.last_transaction
    told = mark_reported(done)
    assert unreported_outcome(told) is None and mark_reported(told) == told


class Backend:
    """An executor that dedupes on the idempotency key, as the contract asks of executors."""

    def __init__(self) -> None:
        self.effects: dict[str, int] = {}
        self.outcomes: dict[str, dict[str, Any]] = {}

    def __call__(self, call: ExecutorCall) -> dict[str, Any]:
        key = call.idempotency_key or ""
        if key not in self.outcomes:
            self.effects[key] = self.effects.get(key, 0) + 1
            self.outcomes[key] = {"ticket": f"T-{len(self.outcomes) + 1}"}
        return self.outcomes[key]


def run(state: TransactionState, backend: Backend, crash_at: int | None, saved: list[str]) -> TransactionState:
    """Play confirm → execute → record, checkpointing (``saved``) at each boundary; stop at a crash."""
    steps = 0

    def checkpoint(s: TransactionState) -> bool:
        nonlocal steps
        steps += 1
        saved.append(s.to_json())
        return crash_at is not None and steps >= crash_at

    if state.transaction_status == S.AWAITING_CONFIRMATION:
        state = confirm(state, scope=SCOPE, at=LATER)
        if checkpoint(state):
            return state
    call = pending_execution(CAT, state)
    if call is not None:
        result = backend(call)
        if crash_at == 99:  # crash between the executor's effect and the checkpoint
            return state
        state = record_result(state, key=call.idempotency_key or "", ok=True, result=result, at=LATER)
        checkpoint(state)
    return state


@pytest.mark.parametrize("crash_at", [1, 2, 99])
def test_a_replay_after_a_crash_never_executes_twice_and_reports_the_recorded_outcome(crash_at: int) -> None:
    backend, saved = Backend(), [awaiting().to_json()]
    run(awaiting(), backend, crash_at, saved)
    resumed = TransactionState.from_json(saved[-1])
    final = run(resumed, backend, None, saved)
    assert final.transaction_status == S.COMPLETED
    assert list(backend.effects.values()) == [1]
    assert final.last_transaction.evidence.result == {"ticket": "T-1"}  # type: ignore[union-attr]
    assert run(final, backend, None, saved) == final  # nothing left to execute


def test_collecting_without_an_active_transaction_is_diagnosed_never_restarted() -> None:
    broken = TransactionState(transaction_status=S.COLLECTING_PARAMETERS)
    found = diagnose(broken)
    assert isinstance(found, Diagnosis) and found.code == "active_status_without_transaction"
    assert "Do not restart" in found.message
    with pytest.raises(InconsistentTransactionState) as info:
        route_turn(CAT, broken, turn("PED-1", ("set_order_id", {"order_id": "PED-1"})))
    assert info.value.diagnosis == found
    with pytest.raises(InconsistentTransactionState):
        start(CAT, broken, CANCEL, at=AT)
    reset = reset_inconsistent(broken, at=AT)
    assert reset.transaction_status == S.IDLE and diagnose(reset) is None


@pytest.mark.parametrize(
    ("state", "code"),
    [
        (TransactionState(Transaction(CANCEL, 1, ("order_id",)), transaction_status=S.IDLE), "status_mismatch"),
        (TransactionState(Transaction(CANCEL, 1, ("order_id",), status=S.COMPLETED), transaction_status=S.COMPLETED),
         "terminal_transaction_still_latched"),
        (TransactionState(Transaction(CANCEL, 1, ("order_id",), status=S.EXECUTING), transaction_status=S.EXECUTING),
         "executing_without_key"),
    ],
)
def test_other_inconsistencies_are_diagnosed(state: TransactionState, code: str) -> None:
    found = diagnose(state)
    assert found is not None and found.code == code
    with pytest.raises(InconsistentTransactionState):  # never an executor call from a broken state
        pending_execution(CAT, state)
    reset = reset_inconsistent(state, at=AT)
    assert diagnose(reset) is None and reset.last_transaction.status == S.FAILED  # type: ignore[union-attr]


def test_phase_errors_name_the_needed_status() -> None:
    with pytest.raises(StateError, match="needs a transaction in AWAITING_CONFIRMATION, state is idle"):
        confirm(TransactionState(), scope=SCOPE, at=AT)
