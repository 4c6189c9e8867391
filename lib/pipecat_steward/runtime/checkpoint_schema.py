"""The schema of a session checkpoint: what a restore accepts before it touches the session.

A checkpoint payload carries ``format_version``; this version of the package reads
``FORMAT_VERSION``. ``payload_problem`` checks a loaded payload against pydantic models of the
session's state (strict types, bounded counters, no unknown fields) and returns the first
problems in plain words, or None when the payload restores as it is. A payload that passes
restores into a session whose every turn runs: wrong types are caught here, not a turn later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from pipecat_steward.core.state import SessionState
from pipecat_steward.core.transactions import TransactionStatus
from pipecat_steward.core.variables import JsonValue

__all__ = ["FORMAT_VERSION", "MAX_COUNT", "payload_problem"]

FORMAT_VERSION = 1
"""The checkpoint format this package writes and reads."""

MAX_COUNT = 2**53
"""Counters and versions stay below this (exact in every backend, Redis's Lua included)."""

Count = Annotated[int, Field(ge=0, lt=MAX_COUNT)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Blocked(_Strict):
    tool: str
    noted: str | None = None


class _Violation(_Strict):
    checklist: str
    kind: str
    step: str | None = None
    detail: str


class _Procedures(_Strict):
    scopes: list[str]
    blocked: list[_Blocked]
    empty_results: list[tuple[str, str]]
    violations: list[_Violation]
    visit: Count
    receipts: list[tuple[str, str]] = []


class _Offer(_Strict):
    kind: Literal["resume", "retry"]
    intent: str
    arguments: dict[str, JsonValue] | None = None


class _Payload(_Strict):
    format_version: Literal[1]
    agent: str | None = None  # the agent that wrote it; None: unnamed, restores into any
    state: str
    turns_done: Count
    script: str
    bot_said: str | None = None
    procedures: _Procedures | None = None
    transactions: str | None = None
    topic: str | None = None
    offer: _Offer | None = None
    writer: str | None = None


class _Evidence(_Strict):
    pre_validation: dict[str, JsonValue] | None = None
    confirmed_at: str | None = None
    arguments: dict[str, JsonValue]
    result: dict[str, JsonValue] | None = None
    ok: bool | None = None
    executed_at: str | None = None
    reported: bool


class _Transaction(_Strict):
    intent: str
    sequence: Count
    required: list[str]
    arguments: dict[str, JsonValue]
    status: TransactionStatus
    missing_parameters: list[str]
    idempotency_key: str | None
    evidence: _Evidence
    started_at: str
    updated_at: str


class _Transactions(_Strict):
    active_transaction: _Transaction | None
    last_transaction: _Transaction | None
    interrupted: list[_Transaction]
    transaction_status: TransactionStatus
    missing_parameters: list[str]
    sequence: Count


_STATE = TypeAdapter(SessionState)
_STATE_FIELDS = frozenset(f.name for f in fields(SessionState))
_COUNTERS = tuple(n for n, t in get_type_hints(SessionState).items() if t is int)
"""Every ``int`` field of the state is a counter (turns, invocations, revisions …)."""


def payload_problem(
    data: object, *, agent: str | None = None, transactions: bool = False
) -> str | None:
    """Why ``data`` is not a checkpoint this package can restore, or None when it is.

    Args:
        data: The loaded payload.
        agent: The name of the agent restoring it: a checkpoint another agent wrote (two
            agents given one identity, say) would put that agent's call into this one.
        transactions: The session runs transactions (``transactions`` must be present).
    """
    if not isinstance(data, Mapping):
        return f"the payload is a {type(data).__name__}, not a JSON object"
    raw: Mapping[str, Any] = data
    found = raw.get("format_version")
    if found != FORMAT_VERSION or isinstance(found, bool):
        return f"format_version is {found!r}; this version reads format_version {FORMAT_VERSION}"
    problem = _validate(_Payload, json.dumps(raw), "")
    if problem is None:
        problem = _agent_problem(raw.get("agent"), agent)
    if problem is None:
        problem = _state_problem(str(raw["state"]))
    if problem is None and transactions:
        text = raw.get("transactions")
        if not isinstance(text, str):
            return "transactions: missing (this agent runs transactions)"
        problem = _validate(_Transactions, text, "transactions.")
    return problem


def _agent_problem(wrote: object, restoring: str | None) -> str | None:
    if wrote is None or restoring is None or wrote == restoring:
        return None
    return (
        f"agent: the checkpoint is of agent {wrote!r}, this session runs {restoring!r} (a "
        "checkpoint restores only into the agent that wrote it: check the identity's agent_id)"
    )


def _state_problem(text: str) -> str | None:
    try:
        parsed = json.loads(text)
        state = _STATE.validate_json(text, strict=True)
    except ValidationError as exc:
        return _describe(exc, "state.")
    except ValueError as exc:
        return f"state: not JSON ({exc})"
    unknown = sorted(set(parsed) - _STATE_FIELDS)
    if unknown:
        return f"state: unknown fields {', '.join(unknown)}"
    bad = [n for n in _COUNTERS if not 0 <= getattr(state, n) < MAX_COUNT]
    bad += [f"retries.{k}" for k, v in state.retries.items() if not 0 <= v < MAX_COUNT]
    bad += [f"slots.{k}.turn" for k, r in state.slots.items() if not 0 <= r.turn < MAX_COUNT]
    if bad:
        return f"state: counters out of range (0 to 2**53): {', '.join(bad)}"
    return None


def _validate(model: type[BaseModel], text: str, prefix: str) -> str | None:
    try:
        model.model_validate_json(text)
    except ValidationError as exc:
        return _describe(exc, prefix)
    return None


def _describe(exc: ValidationError, prefix: str) -> str:
    """The first problems of a validation error, each with its path."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "(top)"
        parts.append(f"{prefix}{where}: {error['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
