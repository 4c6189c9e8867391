"""Pre-validation, deterministic confirmation and idempotent execution, owned by the framework.

The order an adapter follows once parameters are complete::

    PRE_VALIDATION         pre_validation_call → run the task → record_pre_validation
    AWAITING_CONFIRMATION  speak confirmation_text; on the caller's answer confirmation_gate:
                           a pure affirmative confirms in code, anything else goes to the LLM
                           with only confirm/reject/correct visible → route_confirmation
    confirm                EXECUTING with the idempotency key — CHECKPOINT NOW, before the call
    EXECUTING              pending_execution → call the executor with the key → record_result
                           → CHECKPOINT → speak the outcome → mark_reported

After a crash, ``pending_execution`` returns the same call with the same key (an executor must
treat a key it has seen as a replay and return its recorded outcome), and ``record_result``
ignores a second result for a key that already has one, so the first outcome stands.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pipecat_steward.core.slots.affirm import is_affirmation
from pipecat_steward.core.transactions.intents import (
    CONFIRM_TOOL,
    CONFIRMATION_TOOLS,
    CORRECT_TOOL,
    REJECT_TOOL,
    Catalog,
)
from pipecat_steward.core.transactions.lifecycle import fill, finish, interrupt
from pipecat_steward.core.transactions.model import (
    Evidence,
    Transaction,
    TransactionState,
    TransactionStatus,
    require_consistent,
)
from pipecat_steward.core.transactions.routing import ToolUse
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import StateError

__all__ = [
    "AskLLM",
    "Confirm",
    "ConfirmationDecision",
    "ConfirmationGate",
    "ConfirmedByCode",
    "Correct",
    "Detour",
    "ExecutorCall",
    "Reject",
    "Unclear",
    "apply_confirmation",
    "confirm",
    "confirmation_gate",
    "confirmation_text",
    "idempotency_key",
    "mark_reported",
    "pending_execution",
    "pre_validation_call",
    "record_pre_validation",
    "record_pre_validation_failure",
    "record_result",
    "recorded_outcome",
    "route_confirmation",
    "unreported_outcome",
]

S = TransactionStatus


@dataclass(frozen=True, slots=True)
class ExecutorCall:
    """A tool call the adapter must make: pre-validation (no key) or the executor (with one)."""

    tool: str
    arguments: Mapping[str, JsonValue]
    idempotency_key: str | None = None


def _in(state: TransactionState, status: TransactionStatus, what: str) -> Transaction:
    require_consistent(state)
    txn = state.active_transaction
    if txn is None or txn.status != status:
        now = txn.status.value if txn else "idle"
        raise StateError(f"cannot {what}: needs a transaction in {status.value}, state is {now}")
    return txn


# --- pre-validation ---------------------------------------------------------------------------


def pre_validation_call(catalog: Catalog, state: TransactionState) -> ExecutorCall | None:
    """The pre-validation task to run now, or ``None`` when not in ``PRE_VALIDATION``."""
    txn = state.active_transaction
    if txn is None or txn.status != S.PRE_VALIDATION:
        return None
    tool = catalog.intent(txn.intent).pre_validation
    return ExecutorCall(tool, dict(txn.arguments)) if tool else None


def record_pre_validation(
    state: TransactionState, *, eligible: bool, result: Mapping[str, JsonValue], at: str
) -> TransactionState:
    """Store the task's result as evidence; eligible → confirmation, else ``OUT_OF_SCOPE``."""
    txn = _in(state, S.PRE_VALIDATION, "record pre-validation")
    evidence = replace(txn.evidence, pre_validation=dict(result))
    checked = state.with_active(replace(txn, evidence=evidence, status=S.AWAITING_CONFIRMATION))
    return checked if eligible else finish(checked, S.OUT_OF_SCOPE, at=at)


def record_pre_validation_failure(
    state: TransactionState, *, result: Mapping[str, JsonValue], at: str
) -> TransactionState:
    """The check itself failed (a backend error): ``FAILED``, with the error as evidence.

    Not ``OUT_OF_SCOPE``: nothing was learned about eligibility, so the caller must hear that
    the check could not be made (and may retry), never a verdict.
    """
    txn = _in(state, S.PRE_VALIDATION, "record a pre-validation failure")
    evidence = replace(txn.evidence, pre_validation=dict(result))
    return finish(state.with_active(replace(txn, evidence=evidence)), S.FAILED, at=at)


# --- confirmation -----------------------------------------------------------------------------


def confirmation_text(catalog: Catalog, state: TransactionState) -> str:
    """The deterministic confirmation question (rendered by code, never by the prompt)."""
    txn = _in(state, S.AWAITING_CONFIRMATION, "confirm")
    return catalog.intent(txn.intent).render_confirmation(txn.arguments)


@dataclass(frozen=True, slots=True)
class ConfirmedByCode:
    """The answer was a pure affirmative: confirm without an LLM call."""


@dataclass(frozen=True, slots=True)
class AskLLM:
    """Let the LLM read the answer, with only ``tools`` visible."""

    tools: tuple[str, ...] = CONFIRMATION_TOOLS


ConfirmationGate = ConfirmedByCode | AskLLM


def confirmation_gate(state: TransactionState, user_text: str) -> ConfirmationGate:
    """Decide how to read the caller's answer to the confirmation question."""
    txn = _in(state, S.AWAITING_CONFIRMATION, "read a confirmation")
    pending = list(txn.arguments.values())
    return ConfirmedByCode() if is_affirmation(user_text, pending) else AskLLM()


@dataclass(frozen=True, slots=True)
class Confirm:
    """The LLM called ``confirm_transaction``."""


@dataclass(frozen=True, slots=True)
class Reject:
    """The LLM called ``reject_transaction``: the caller does not want it (``CANCELLED``)."""


@dataclass(frozen=True, slots=True)
class Correct:
    """The LLM called ``correct_transaction``: merge ``values`` and confirm again."""

    values: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class Unclear:
    """No usable confirmation tool call: ask the confirmation question again."""


@dataclass(frozen=True, slots=True)
class Detour:
    """The caller asked for another intent first.

    The pending transaction is set aside (arguments and all, resumable) and ``intent`` starts.
    """

    intent: str
    arguments: Mapping[str, JsonValue]


ConfirmationDecision = Confirm | Reject | Correct | Detour | Unclear


def route_confirmation(
    catalog: Catalog, state: TransactionState, calls: Sequence[ToolUse]
) -> ConfirmationDecision:
    """Read the LLM's confirmation tool calls (correct > reject > confirm > detour).

    ``correct_transaction`` takes ``{"parameter": name, "value": v}`` or ``{name: v, …}``; a
    ``start_<other intent>`` call alone is a detour; other calls are ignored.
    """
    txn = _in(state, S.AWAITING_CONFIRMATION, "route a confirmation")
    required = catalog.intent(txn.intent).required
    names = [c.name for c in calls]
    values: dict[str, JsonValue] = {}
    for call in (c for c in calls if c.name == CORRECT_TOOL):
        values.update(_correction(call.args, required))
    if values:
        return Correct(values)
    if REJECT_TOOL in names:
        return Reject()
    if CONFIRM_TOOL in names:
        return Confirm()
    starts = [(catalog.start_tools[c.name], c) for c in calls if c.name in catalog.start_tools]
    other = [(i, c) for i, c in starts if i != txn.intent]
    if other:
        intent, call = other[0]
        spec = catalog.intent(intent)
        args = {p: call.args[p] for p in spec.required if call.args.get(p) is not None}
        return Detour(intent, args)
    return Unclear()


def _correction(args: Mapping[str, JsonValue], required: tuple[str, ...]) -> dict[str, JsonValue]:
    name, value = args.get("parameter"), args.get("value")
    if isinstance(name, str) and name in required and value is not None:
        return {name: value}
    return {k: v for k, v in args.items() if k in required and v is not None}


def apply_confirmation(
    catalog: Catalog,
    state: TransactionState,
    decision: ConfirmationGate | ConfirmationDecision,
    *,
    scope: str,
    at: str,
) -> TransactionState:
    """Carry out a confirmation outcome (exhaustive); ``scope`` feeds the idempotency key."""
    match decision:
        case ConfirmedByCode() | Confirm():
            return confirm(state, scope=scope, at=at)
        case Reject():
            return finish(state, S.CANCELLED, at=at)
        case Correct(values=values):
            return fill(catalog, state, values, at=at)
        case Detour(intent=intent, arguments=arguments):
            return interrupt(catalog, state, intent, arguments, at=at)
        case AskLLM() | Unclear():
            return state


# --- execution --------------------------------------------------------------------------------


def idempotency_key(
    scope: str, intent: str, sequence: int, arguments: Mapping[str, JsonValue]
) -> str:
    """Derive the key from identity + intent + transaction number + canonical arguments.

    ``scope`` is the conversation identity (``tenant/agent/session``). The same confirmed
    transaction always gets the same key; a new transaction (another ``sequence``) a new one.
    """
    canonical = json.dumps(
        [scope, intent, sequence, dict(arguments)], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def confirm(state: TransactionState, *, scope: str, at: str) -> TransactionState:
    """Confirmed: ``EXECUTING`` with the idempotency key and the arguments as evidence.

    Save the returned state durably BEFORE calling the executor.
    """
    txn = _in(state, S.AWAITING_CONFIRMATION, "confirm")
    key = idempotency_key(scope, txn.intent, txn.sequence, txn.arguments)
    evidence = replace(txn.evidence, confirmed_at=at, arguments=dict(txn.arguments))
    executing = replace(
        txn, status=S.EXECUTING, idempotency_key=key, evidence=evidence, updated_at=at
    )
    return state.with_active(executing)


def pending_execution(catalog: Catalog, state: TransactionState) -> ExecutorCall | None:
    """The executor call still owed (also after a crash: same arguments, same key)."""
    require_consistent(state)
    txn = state.active_transaction
    if txn is None or txn.status != S.EXECUTING or txn.evidence.ok is not None:
        return None
    spec = catalog.intent(txn.intent)
    return ExecutorCall(spec.executor, dict(txn.evidence.arguments), txn.idempotency_key)


def record_result(
    state: TransactionState, *, key: str, ok: bool, result: Mapping[str, JsonValue], at: str
) -> TransactionState:
    """Record the executor's outcome as evidence and finish ``COMPLETED`` or ``FAILED``.

    A result for a key that already has a recorded outcome is ignored (the first stands).

    Raises:
        StateError: When no transaction is executing under ``key``.
    """
    if recorded_outcome(state, key) is not None:
        return state
    txn = _in(state, S.EXECUTING, "record a result")
    if txn.idempotency_key != key:
        raise StateError(
            f"result for key {key!r} but {txn.intent!r} executes under {txn.idempotency_key!r}"
        )
    evidence = replace(txn.evidence, result=dict(result), ok=ok, executed_at=at)
    done = state.with_active(replace(txn, evidence=evidence))
    return finish(done, S.COMPLETED if ok else S.FAILED, at=at)


def recorded_outcome(state: TransactionState, key: str) -> Evidence | None:
    """The recorded outcome of the execution under ``key``, wherever it is kept."""
    for txn in (state.active_transaction, state.last_transaction):
        if txn is not None and txn.idempotency_key == key and txn.evidence.ok is not None:
            return txn.evidence
    return None


def unreported_outcome(state: TransactionState) -> Transaction | None:
    """The last transaction whose outcome the caller has not heard yet (say it on resume)."""
    last = state.last_transaction
    if last is None or last.evidence.ok is None or last.evidence.reported:
        return None
    return last


def mark_reported(state: TransactionState) -> TransactionState:
    """Note that the caller heard the last transaction's outcome."""
    last = unreported_outcome(state)
    if last is None:
        return state
    return replace(
        state, last_transaction=replace(last, evidence=replace(last.evidence, reported=True))
    )
