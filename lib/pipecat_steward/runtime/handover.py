"""What happens when a conversation leaves the steward's hands: hand-overs and the session end.

An escalation (retries or steer-back exhausted, a declined required input, the stall escape)
and a ``transfer`` response part are hand-overs: the flow's ``handover`` tool is called (unless
the exit names its own ``then`` call) and the app's ``on_handover`` callback is told. An
``end_session`` response part asks the host to end the call once the reply has been spoken.
No Pipecat import here: the hosts (Pipecat hook, speech-to-speech steward, direct player) do
the ending their own way.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pipecat_steward.core.slots import ToolCall
from pipecat_steward.core.slots.exits import then_call
from pipecat_steward.core.slots.prompt import summary
from pipecat_steward.runtime.records import RecordedCall

if TYPE_CHECKING:
    from pipecat_steward.runtime.session import StewardSession

__all__ = ["Handover", "HandoverCallback", "HandoverKind", "exit_parts", "hand_over"]

_log = logging.getLogger(__name__)

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


async def hand_over(session: StewardSession, handover: Handover) -> dict[str, Any]:
    """Call the flow's hand-over tool (unless an exit tool already ran) and the app's callback.

    Returns:
        What was done, for the trace: ``{"kind", "tool"?, "callback"?}``.
    """
    data: dict[str, Any] = {"kind": handover.kind}
    call = _handover_call(session)
    if call is not None and not handover.tool_called:
        args = {**call.args, **{k: v for k, v in handover.details.items() if k != "type"}}
        result = await session.invoke(call.name, args)
        outcome = "error" if result.get("error") else "ok"
        session.turn.fired.append(RecordedCall(call.name, args, outcome, result))
        data["tool"] = call.name
        handover = dataclasses.replace(handover, tool_called=True)
    if session.on_handover is not None:
        data["callback"] = await _notify(session.on_handover, handover)
    return data


def _handover_call(session: StewardSession) -> ToolCall | None:
    flow, state = session.agent.flow, session.state
    calls = then_call(flow.config.handover, {**state.variables, "summary": summary(flow, state)})
    return calls[0] if calls else None


async def _notify(callback: HandoverCallback, handover: Handover) -> str:
    try:
        result = callback(handover)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        _log.exception("on_handover raised; the hand-over is traced as failed")
        return f"error: {type(exc).__name__}"
    return "ok"
