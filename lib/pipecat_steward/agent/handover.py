"""What happens when a conversation leaves the steward's hands: hand-overs and the session end.

An escalation (retries or steer-back exhausted, a declined required input, the stall escape)
and a ``transfer`` response part are hand-overs: the flow's ``handover`` tool is called (unless
the exit names its own ``then`` call) and the app's ``on_handover`` callback is told. An
``end_session`` response part asks the host to end the call once the reply has been spoken.
No Pipecat import here: the hosts (Pipecat hook, speech-to-speech steward, direct player) do
the ending their own way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Handover", "HandoverCallback", "HandoverKind", "exit_parts"]

HandoverKind = Literal["escalation", "transfer"]


@dataclass(frozen=True, slots=True)
class Handover:
    """A hand-over to a person or another system.

    Attributes:
        kind: ``escalation`` (the engine gave up) or ``transfer`` (a ``transfer`` part).
        message: What the bot said as it handed over.
        summary: What was collected so far, one line (``party size: 4, date: July 17th``).
        details: The ``transfer`` part's fields, or the ``then`` call's arguments.
        tool_called: Whether an exit tool (the exit's own ``then`` or the flow's ``handover``) ran.
    """

    kind: HandoverKind
    message: str = ""
    summary: str = ""
    details: Mapping[str, Any] = field(default_factory=lambda: {})
    tool_called: bool = False


HandoverCallback = Callable[[Handover], Awaitable[None] | None]
"""The app's hand-over hook (dial the human queue, send a SIP REFER, open a ticket…)."""


def exit_parts(parts: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """The ``transfer`` parts among delivered response parts, and whether one ends the session."""
    transfers = [p for p in parts if p.get("type") == "transfer"]
    return transfers, any(p.get("type") == "end_session" for p in parts)
