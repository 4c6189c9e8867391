"""A trace file as the studio replays it, checked as it is read (``TraceFileError``).

``steward simulate --json`` prints one turn trace a line. The studio turns each into events,
so every field it reads must have the trace's type where present: lists of calls, utterances
and gate decisions as objects, slots as records, checklist steps with their states. A field may
be missing (a hand-made trace holds what it holds); a line that is no JSON object, or a field
of the wrong type, stops the replay with the file, the line and the place, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, NotRequired, TypedDict, cast

from pydantic import Field, TypeAdapter, ValidationError

from pipecat_steward.events.schema import CorrectionStatus, StepState, UtteranceSource
from pipecat_steward.exceptions import StewardError
from pipecat_steward.replay.format_errors import validation_message

__all__ = ["TraceFileError", "TurnTrace", "read_traces"]


class TraceFileError(StewardError):
    """A trace file cannot be replayed; the message names the file, the line and the place."""


class _Call(TypedDict):
    name: NotRequired[str]
    args: NotRequired[dict[str, Any] | None]
    outcome: NotRequired[str]


class _Fired(TypedDict):
    tool: NotRequired[str]
    args: NotRequired[dict[str, Any] | None]
    ok: NotRequired[bool]


class _Said(TypedDict):
    text: str
    source: NotRequired[UtteranceSource | None]


class _Record(TypedDict):
    status: NotRequired[str | None]
    value: NotRequired[Any]
    source: NotRequired[str | None]


class _Gate(TypedDict):
    tool: NotRequired[str]
    decision: NotRequired[str]
    reason: NotRequired[str | None]
    open: NotRequired[list[str] | None]


class _Checklist(TypedDict):
    procedure: NotRequired[str]
    current: NotRequired[str | None]
    steps: NotRequired[dict[str, StepState] | None]
    last_violation: NotRequired[dict[str, Any] | None]


class _Correction(TypedDict):
    status: NotRequired[CorrectionStatus]
    step: NotRequired[str | None]
    text: NotRequired[str]
    channel: NotRequired[str | None]
    severity: NotRequired[str | None]
    kind: NotRequired[str | None]


class TurnTrace(TypedDict):
    """The fields of a turn trace the studio reads (``pipecat_steward.testing.trace_turn``)."""

    turn: NotRequired[Annotated[int, Field(ge=0)]]  # a caller turn, as events count them
    user: NotRequired[str | None]
    phase: NotRequired[str | None]
    status: NotRequired[str | None]
    visible_tools: NotRequired[list[str] | None]
    asks: NotRequired[list[str] | None]
    llm_calls: NotRequired[list[_Call] | None]
    fired: NotRequired[list[_Fired] | None]
    gate: NotRequired[list[_Gate] | None]
    bot: NotRequired[list[_Said] | None]
    slots: NotRequired[dict[str, _Record] | None]
    variables: NotRequired[dict[str, _Record] | None]
    checklist: NotRequired[_Checklist | None]
    corrections: NotRequired[list[_Correction] | None]
    slm_calls: NotRequired[int | None]
    transaction: NotRequired[dict[str, Any] | None]


_TRACE = TypeAdapter(TurnTrace)


def read_traces(path: Path) -> list[TurnTrace]:
    """The turn traces of a ``steward simulate --json`` output file (one JSON object a line).

    Header lines a folder run prints (``== name``) and blank lines are skipped.

    Raises:
        TraceFileError: The file cannot be read, or a line is not a turn trace.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFileError(f"{path}: cannot read: {exc}") from None
    return [
        _trace(line, f"{path}: line {number}")
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip().startswith("{")
    ]


def _trace(line: str, where: str) -> TurnTrace:
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TraceFileError(f"{where}: not JSON ({exc.msg}, column {exc.colno})") from None
    try:
        return cast(TurnTrace, _TRACE.validate_python(raw, strict=True))
    except ValidationError as exc:
        raise TraceFileError(validation_message(where, exc)) from None
