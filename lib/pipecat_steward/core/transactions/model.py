"""The transaction state: the ``active_transaction`` latch and its lifecycle.

``TransactionState`` is plain, immutable data: every lifecycle function returns a new one. It
round-trips through JSON (``to_json`` / ``from_json``), so a checkpoint can carry it next to the
``SessionState``. ``missing_parameters`` is never stored as truth: it is computed from the
canonical transaction (its required parameters minus its collected arguments).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal, cast

from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import StateError

__all__ = [
    "ACTIVE_STATUSES",
    "TERMINAL_STATUSES",
    "Diagnosis",
    "DiagnosisCode",
    "Evidence",
    "InconsistentTransactionState",
    "Transaction",
    "TransactionState",
    "TransactionStatus",
    "diagnose",
]


class TransactionStatus(StrEnum):
    """Where a transaction is in its lifecycle."""

    IDLE = "IDLE"
    COLLECTING_PARAMETERS = "COLLECTING_PARAMETERS"
    PRE_VALIDATION = "PRE_VALIDATION"
    AWAITING_CONFIRMATION = "AWAITING_CONFIRMATION"
    EXECUTING = "EXECUTING"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"
    FAILED = "FAILED"


S = TransactionStatus
ACTIVE_STATUSES = frozenset(
    {S.COLLECTING_PARAMETERS, S.PRE_VALIDATION, S.AWAITING_CONFIRMATION, S.EXECUTING}
)
TERMINAL_STATUSES = frozenset({S.COMPLETED, S.CANCELLED, S.OUT_OF_SCOPE, S.FAILED})


@dataclass(frozen=True, slots=True)
class Evidence:
    """The audit trail of one transaction: pre-validation and execution evidence.

    Attributes:
        pre_validation: The pre-validation task's result, when one ran.
        confirmed_at: When the caller confirmed (time is a parameter, ISO text by convention).
        arguments: The arguments the executor was (or will be) called with.
        result: The executor's result, once recorded.
        ok: Whether the executor succeeded (``None`` until a result is recorded).
        executed_at: When the result was recorded.
        reported: Whether the outcome has been told to the caller.
    """

    pre_validation: dict[str, JsonValue] | None = None
    confirmed_at: str | None = None
    arguments: dict[str, JsonValue] = field(default_factory=lambda: {})
    result: dict[str, JsonValue] | None = None
    ok: bool | None = None
    executed_at: str | None = None
    reported: bool = False


@dataclass(frozen=True, slots=True)
class Transaction:
    """One transaction of one intent: the canonical in-flight record (the latch's content).

    Attributes:
        intent: The intent (topic) name, e.g. ``retail_order_cancel``.
        sequence: The transaction's number within the session (1, 2, …).
        required: The intent's required parameters, in asking order.
        arguments: Parameters collected so far (merged incrementally, never rebuilt).
        status: The transaction's own lifecycle status.
        idempotency_key: Written when the caller confirms, before the executor is called.
        evidence: Pre-validation, confirmation and execution evidence.
        started_at: When the transaction started (a parameter).
        updated_at: When it last changed (a parameter).
    """

    intent: str
    sequence: int
    required: tuple[str, ...]
    arguments: dict[str, JsonValue] = field(default_factory=lambda: {})
    status: TransactionStatus = S.COLLECTING_PARAMETERS
    idempotency_key: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    started_at: str = ""
    updated_at: str = ""

    @property
    def missing_parameters(self) -> tuple[str, ...]:
        """Required parameters without a value, computed from the canonical arguments."""
        return tuple(p for p in self.required if self.arguments.get(p) is None)

    def to_dict(self) -> dict[str, JsonValue]:
        """JSON-safe form; ``missing_parameters`` is included for readers, ignored on load."""
        ev = self.evidence
        evidence: dict[str, JsonValue] = {
            "pre_validation": ev.pre_validation,
            "confirmed_at": ev.confirmed_at,
            "arguments": dict(ev.arguments),
            "result": ev.result,
            "ok": ev.ok,
            "executed_at": ev.executed_at,
            "reported": ev.reported,
        }
        return {
            "intent": self.intent,
            "sequence": self.sequence,
            "required": list(self.required),
            "arguments": dict(self.arguments),
            "status": self.status.value,
            "missing_parameters": list(self.missing_parameters),
            "idempotency_key": self.idempotency_key,
            "evidence": evidence,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Transaction:
        """Rebuild from ``to_dict`` output (``missing_parameters`` is recomputed)."""
        return cls(
            intent=str(raw["intent"]),
            sequence=int(raw["sequence"]),
            required=tuple(str(p) for p in raw["required"]),
            arguments=dict(raw["arguments"]),
            status=TransactionStatus(raw["status"]),
            idempotency_key=raw.get("idempotency_key"),
            evidence=Evidence(**dict(raw.get("evidence") or {})),
            started_at=str(raw.get("started_at", "")),
            updated_at=str(raw.get("updated_at", "")),
        )


DiagnosisCode = Literal[
    "active_status_without_transaction",
    "status_mismatch",
    "terminal_transaction_still_latched",
    "executing_without_key",
]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Why a transaction state is inconsistent, and what to do about it."""

    code: DiagnosisCode
    message: str


class InconsistentTransactionState(StateError):
    """A lifecycle operation met an inconsistent state; ``diagnosis`` says which and the fix."""

    def __init__(self, diagnosis: Diagnosis) -> None:
        self.diagnosis = diagnosis
        super().__init__(f"{diagnosis.code}: {diagnosis.message}")


@dataclass(frozen=True, slots=True)
class TransactionState:
    """The transaction part of a session's state (checkpointed with it).

    Attributes:
        active_transaction: The latch: the in-flight transaction, ``None`` when idle.
        last_transaction: Snapshot of the latest terminal transaction (audit; never reactivated).
        interrupted: Resumable transactions set aside by an interruption, most recent last.
        transaction_status: The session's logical status; mirrors the active transaction's
            status, or the last terminal status, or ``IDLE``.
        sequence: Transactions started so far (numbers new ones).
    """

    active_transaction: Transaction | None = None
    last_transaction: Transaction | None = None
    interrupted: tuple[Transaction, ...] = ()
    transaction_status: TransactionStatus = S.IDLE
    sequence: int = 0

    @property
    def missing_parameters(self) -> tuple[str, ...]:
        """The active transaction's missing parameters (empty when idle)."""
        active = self.active_transaction
        return active.missing_parameters if active is not None else ()

    def with_active(self, txn: Transaction) -> TransactionState:
        """Return a state whose latch holds ``txn`` and whose status mirrors it."""
        return replace(self, active_transaction=txn, transaction_status=txn.status)

    def to_dict(self) -> dict[str, JsonValue]:
        """JSON-safe form of the whole transaction state."""
        active, last = self.active_transaction, self.last_transaction
        return {
            "active_transaction": active.to_dict() if active else None,
            "last_transaction": last.to_dict() if last else None,
            "interrupted": [t.to_dict() for t in self.interrupted],
            "transaction_status": self.transaction_status.value,
            "missing_parameters": list(self.missing_parameters),
            "sequence": self.sequence,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TransactionState:
        """Rebuild from ``to_dict`` output. It is not checked: call ``diagnose`` after a restore.

        Raises:
            StateError: When ``raw`` is not a serialised transaction state.
        """
        try:
            active, last = raw.get("active_transaction"), raw.get("last_transaction")
            return cls(
                active_transaction=Transaction.from_dict(active) if active else None,
                last_transaction=Transaction.from_dict(last) if last else None,
                interrupted=tuple(Transaction.from_dict(t) for t in raw.get("interrupted", [])),
                transaction_status=TransactionStatus(raw.get("transaction_status", "IDLE")),
                sequence=int(raw.get("sequence", 0)),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise StateError(f"not a serialised transaction state: {exc!r}") from exc

    def to_json(self) -> str:
        """Serialise to compact JSON (lossless: ``from_json(to_json(s)) == s``)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> TransactionState:
        """Rebuild from ``to_json`` output.

        Raises:
            StateError: When the text is not a serialised transaction state.
        """
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise StateError(f"not a serialised transaction state: {exc}") from exc
        if not isinstance(raw, dict):
            raise StateError("not a serialised transaction state: expected a JSON object")
        return cls.from_dict(cast(dict[str, Any], raw))


def diagnose(state: TransactionState) -> Diagnosis | None:
    """Return why ``state`` is inconsistent, or ``None`` when it is sound.

    Call it right after restoring a checkpoint, before any routing: an active
    status without an active transaction is reported, never silently restarted.
    """
    active, status = state.active_transaction, state.transaction_status
    if active is None:
        if status in ACTIVE_STATUSES:
            return Diagnosis(
                "active_status_without_transaction",
                f"transaction_status is {status.value} but active_transaction is empty; the "
                "checkpoint lost its latch. Do not restart the tool: report it, then cancel "
                "the session's transaction with reset_inconsistent() and ask the caller again.",
            )
        return None
    if active.status != status:
        return Diagnosis(
            "status_mismatch",
            f"transaction_status is {status.value} but the active transaction "
            f"{active.intent!r} is {active.status.value}; only the lifecycle functions may "
            "change either. Report it and call reset_inconsistent().",
        )
    if active.status in TERMINAL_STATUSES:
        return Diagnosis(
            "terminal_transaction_still_latched",
            f"the active transaction {active.intent!r} is {active.status.value} (terminal) but "
            "still latched; terminal transactions move to last_transaction.",
        )
    if active.status == S.EXECUTING and not active.idempotency_key:
        return Diagnosis(
            "executing_without_key",
            f"{active.intent!r} is EXECUTING without an idempotency key; it cannot be replayed "
            "safely. Report it; do not call the executor.",
        )
    return None


def require_consistent(state: TransactionState) -> None:
    """Raise ``InconsistentTransactionState`` when ``diagnose`` finds a problem."""
    found = diagnose(state)
    if found is not None:
        raise InconsistentTransactionState(found)
