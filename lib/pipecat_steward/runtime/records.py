"""What happens in a caller turn: the records every player and the seam share.

``TurnRecord`` collects one caller turn: the engine's actions, the model's tool calls, the calls
the engine made, what the bot said, debug entries, rich payloads and gate decisions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pipecat_steward.core.slots import Action
from pipecat_steward.core.slots.action import DebugEntry

__all__ = [
    "trace_value",
    "BotUtterance",
    "RecordedCall",
    "Inference",
    "LLMPolicy",
    "Outcome",
    "Source",
    "TurnRecord",
]

Source = Literal["llm", "preempt", "announce", "note"]
Outcome = Literal["ok", "error", "refused"]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """A tool call the LLM makes (or an executor the engine fires), with its outcome."""

    name: str
    args: Mapping[str, Any] = field(default_factory=lambda: {})
    outcome: Outcome = "ok"
    result: Mapping[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class Inference:
    """What the LLM does in one inference: tool calls, then (optionally) text."""

    calls: Sequence[RecordedCall] = ()
    say: str | None = None


LLMPolicy = Callable[[Action, int], Inference]
"""Decides the LLM's inference from the engine's action and the inference index in the turn."""


@dataclass(frozen=True, slots=True)
class BotUtterance:
    """Something the bot said this turn, with where it came from."""

    text: str
    source: Source


@dataclass(slots=True)
class TurnRecord:
    """Everything that happened in one caller turn."""

    user: str
    actions: list[Action] = field(default_factory=lambda: [])
    llm_calls: list[RecordedCall] = field(default_factory=lambda: [])
    fired: list[RecordedCall] = field(default_factory=lambda: [])
    bot: list[BotUtterance] = field(default_factory=lambda: [])
    events: list[DebugEntry] = field(default_factory=lambda: [])
    payloads: list[dict[str, Any]] = field(default_factory=lambda: [])
    gates: list[dict[str, Any]] = field(default_factory=lambda: [])

    @property
    def said(self) -> str:
        return " ".join(u.text for u in self.bot)


def trace_value(value: object) -> Any:
    """A debug entry's value as traces and events keep it (anything not a scalar or list: text)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [trace_value(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return str(value)
