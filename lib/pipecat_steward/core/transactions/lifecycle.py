"""Lifecycle transitions of the latch: start, merge, interrupt, resume, cancel, finish.

Every function takes a ``TransactionState`` and returns a new one; time is the ``at``
parameter. The latch (``active_transaction``) is cleared in exactly one place, ``finish``, and
only with a terminal status: nothing else may drop an in-flight transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pipecat_steward.core.transactions import routing
from pipecat_steward.core.transactions.intents import (
    CANCEL_TOOL,
    CONFIRMATION_TOOLS,
    Catalog,
    IntentSpec,
)
from pipecat_steward.core.transactions.model import (
    TERMINAL_STATUSES,
    Transaction,
    TransactionState,
    TransactionStatus,
    require_consistent,
)
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import StateError

__all__ = [
    "apply",
    "cancel",
    "fill",
    "finish",
    "interrupt",
    "merge_arguments",
    "reset_inconsistent",
    "resumable",
    "resume",
    "start",
    "visible_tools",
]

S = TransactionStatus


def merge_arguments(
    existing: Mapping[str, JsonValue], new: Mapping[str, JsonValue], parameters: tuple[str, ...]
) -> dict[str, JsonValue]:
    """Merge ``{**existing, **new}`` over the intent's parameters; null never clobbers."""
    merged = dict(existing)
    merged.update({k: v for k, v in new.items() if k in parameters and v is not None})
    return merged


def _advance(spec: IntentSpec, txn: Transaction, at: str) -> Transaction:
    """Status after a merge: collect while something is missing, then validate or confirm."""
    if txn.missing_parameters:
        status = S.COLLECTING_PARAMETERS
    else:
        status = S.PRE_VALIDATION if spec.pre_validation else S.AWAITING_CONFIRMATION
    return replace(txn, status=status, updated_at=at)


def start(
    catalog: Catalog,
    state: TransactionState,
    intent: str,
    arguments: Mapping[str, JsonValue] | None = None,
    *,
    at: str,
) -> TransactionState:
    """Latch a transaction of ``intent``; an interrupted one of that intent is resumed instead.

    Raises:
        StateError: When a transaction is already latched (interrupt or cancel it first).
    """
    require_consistent(state)
    if state.active_transaction is not None:
        raise StateError(
            f"cannot start {intent!r}: {state.active_transaction.intent!r} is latched; "
            "apply InterruptAndRoute or Cancel to leave it first"
        )
    spec = catalog.intent(intent)
    if any(t.intent == intent for t in state.interrupted):
        return fill(catalog, resume(catalog, state, intent, at=at), arguments or {}, at=at)
    sequence = state.sequence + 1
    txn = Transaction(intent, sequence, spec.required, started_at=at, updated_at=at)
    txn = replace(txn, arguments=merge_arguments({}, arguments or {}, spec.required))
    txn = _advance(spec, txn, at)
    return replace(state.with_active(txn), sequence=sequence)


def fill(
    catalog: Catalog, state: TransactionState, values: Mapping[str, JsonValue], *, at: str
) -> TransactionState:
    """Merge ``values`` into the active transaction (complement, never rebuild) and advance.

    Raises:
        StateError: When nothing is latched or the transaction is past collection.
    """
    txn = _latched(state, "fill")
    if txn.status not in (S.COLLECTING_PARAMETERS, S.AWAITING_CONFIRMATION, S.PRE_VALIDATION):
        raise StateError(f"cannot fill {txn.intent!r} while {txn.status.value}")
    spec = catalog.intent(txn.intent)
    merged = merge_arguments(txn.arguments, values, spec.required)
    if merged == txn.arguments and txn.status == S.COLLECTING_PARAMETERS:
        return state
    cleared = replace(txn.evidence, pre_validation=None)
    return state.with_active(_advance(spec, replace(txn, arguments=merged, evidence=cleared), at))


def finish(state: TransactionState, status: TransactionStatus, *, at: str) -> TransactionState:
    """Release the latch with a terminal ``status``; the transaction becomes ``last_transaction``.

    Raises:
        StateError: When ``status`` is not terminal (the latch is never cleared before one).
    """
    if status not in TERMINAL_STATUSES:
        raise StateError(
            f"the latch is released only with a terminal status (COMPLETED, CANCELLED, "
            f"OUT_OF_SCOPE, FAILED), not {status.value}"
        )
    txn = replace(_latched(state, "finish"), status=status, updated_at=at)
    return replace(state, active_transaction=None, last_transaction=txn, transaction_status=status)


def cancel(state: TransactionState, *, at: str) -> TransactionState:
    """The caller abandons the active transaction: ``CANCELLED``."""
    return finish(state, S.CANCELLED, at=at)


def interrupt(
    catalog: Catalog,
    state: TransactionState,
    intent: str,
    arguments: Mapping[str, JsonValue] | None = None,
    *,
    at: str,
) -> TransactionState:
    """Set the active transaction aside (resumable, arguments kept) and latch ``intent``."""
    txn = replace(_latched(state, "interrupt"), updated_at=at)
    if txn.status == S.EXECUTING:
        raise StateError(
            f"cannot interrupt {txn.intent!r} while EXECUTING; record its result first"
        )
    rest = tuple(t for t in state.interrupted if t.intent != txn.intent)
    parked = replace(
        state, active_transaction=None, interrupted=(*rest, txn), transaction_status=S.IDLE
    )
    return start(catalog, parked, intent, arguments, at=at)


def resumable(state: TransactionState) -> Transaction | None:
    """The transaction an idle session would resume next (the latest interrupted)."""
    return state.interrupted[-1] if state.interrupted else None


def resume(
    catalog: Catalog, state: TransactionState, intent: str | None = None, *, at: str
) -> TransactionState:
    """Latch an interrupted transaction again (the latest, or the one of ``intent``).

    Raises:
        StateError: When a transaction is latched or none of ``intent`` was interrupted.
    """
    require_consistent(state)
    if state.active_transaction is not None:
        raise StateError(f"cannot resume: {state.active_transaction.intent!r} is latched")
    found = [t for t in state.interrupted if intent is None or t.intent == intent]
    if not found:
        raise StateError(f"no interrupted transaction{f' of {intent!r}' if intent else ''}")
    txn = found[-1]
    rest = tuple(t for t in state.interrupted if t is not txn)
    spec = catalog.intent(txn.intent)
    return replace(state.with_active(_advance(spec, txn, at)), interrupted=rest)


def apply(
    catalog: Catalog, state: TransactionState, decision: routing.RouteDecision, *, at: str
) -> TransactionState:
    """Carry out a routing decision (exhaustive over ``RouteDecision``)."""
    match decision:
        case routing.Fill(values=values):
            return fill(catalog, state, values, at=at)
        case routing.Cancel(then_start=then):
            done = cancel(state, at=at)
            return start(catalog, done, then, at=at) if then else done
        case routing.InterruptAndRoute(intent=intent, arguments=arguments):
            return interrupt(catalog, state, intent, arguments, at=at)
        case routing.Start(intent=intent, arguments=arguments):
            return start(catalog, state, intent, arguments, at=at)
        case routing.StayAndIgnoreKeyword() | routing.Clarify() | routing.Idle():
            return state


def visible_tools(catalog: Catalog, state: TransactionState) -> tuple[str, ...]:
    """The transaction tools the LLM may see now.

    Idle: every ``start_<intent>``. Collecting: the active intent's setters, ``cancel_transaction``
    and the other intents' start tools. Awaiting confirmation: confirm/reject/correct and the
    other intents' start tools (a detour sets the pending transaction aside, never cancels it).
    Pre-validation and execution are code steps: nothing.
    """
    txn = state.active_transaction
    if txn is None:
        return tuple(catalog.start_tools)
    others = tuple(t for t, i in catalog.start_tools.items() if i != txn.intent)
    if txn.status == S.COLLECTING_PARAMETERS:
        spec = catalog.intent(txn.intent)
        return (*spec.setter_map(), CANCEL_TOOL, *others)
    if txn.status == S.AWAITING_CONFIRMATION:
        return (*CONFIRMATION_TOOLS, *others)
    return ()


def reset_inconsistent(state: TransactionState, *, at: str) -> TransactionState:
    """Leave a diagnosed state: whatever is latched ends ``FAILED``; the session is idle.

    Only for states ``diagnose`` reported (after the seam reported the diagnosis); it never
    restarts a tool. Interrupted transactions stay resumable.
    """
    txn = state.active_transaction
    last = (
        replace(txn, status=S.FAILED, updated_at=at) if txn is not None else state.last_transaction
    )
    return TransactionState(None, last, state.interrupted, S.IDLE, state.sequence)


def _latched(state: TransactionState, what: str) -> Transaction:
    require_consistent(state)
    txn = state.active_transaction
    if txn is None:
        raise StateError(f"cannot {what}: no transaction is latched (start one first)")
    return txn
