"""What one engine invocation returns: an ``Action`` the adapter carries out.

The engine decides; the adapter (Pipecat seam, simulator, replay) acts. An action says which
steward tools are visible, what instruction suffix to set, whether to skip the LLM and speak a
message verbatim (preempt), and which tool calls to run first (executors, the auto-confirm, an
escalation call).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from pipecat_steward.core.slots.config import ResponsePart
from pipecat_steward.core.slots.dag import Decision
from pipecat_steward.core.state import RunStatus, SessionState
from pipecat_steward.core.variables import JsonValue

__all__ = ["Action", "CallKind", "Chooser", "DebugEntry", "Hint", "Phase", "EngineStep", "ToolCall"]

Phase = Literal["collection", "readback", "gate", "terminal"]
CallKind = Literal["executor", "confirm", "then"]
HintTag = Literal[
    "readback_scope", "deferred_collection", "steer_back", "user_context", "confirm_inferred"
]
T = TypeVar("T")


class Chooser(Protocol):
    """The random source the engine is given (``random.Random`` fits)."""

    def choice(self, seq: list[T], /) -> T: ...


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the adapter makes before (or instead of) the LLM.

    Attributes:
        name: Tool name.
        args: Arguments (task inputs, or resolved ``then`` args).
        kind: ``executor`` (a task), ``confirm`` (auto-confirm) or ``then`` (exhaustion call).
        task: The task an executor call serves.
    """

    name: str
    args: Mapping[str, JsonValue] = field(default_factory=lambda: {})
    kind: CallKind = "executor"
    task: str | None = None


@dataclass(frozen=True, slots=True)
class Hint:
    """An XML-tagged block of the instruction suffix."""

    tag: HintTag
    text: str

    def render(self) -> str:
        return f"<{self.tag}>\n{self.text}\n</{self.tag}>"


@dataclass(frozen=True, slots=True)
class DebugEntry:
    """A structured log entry: its tag (what happened) and the invocation counter ``n``."""

    tag: str
    n: int
    data: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Action:
    """The engine's answer to one LLM invocation.

    Attributes:
        phase: ``collection``, ``readback``, ``gate`` or ``terminal``.
        decision: The DAG decision behind the action (None for early returns).
        status: The session status after the invocation.
        visible_tools: Steward-managed tools the LLM may call now.
        hidden_tools: Steward-managed tools the LLM must not see now (executors always).
        directive: What the LLM should convey this turn (the ``<system_directive>``).
        hints: Extra instruction blocks for this phase.
        suffix: The whole instruction suffix: one phase block, never two.
        preempt: Skip the LLM; speak ``message`` (or ``response``) verbatim.
        force_preempt: The preempt ignores the first-turn guard (which otherwise lets the
            LLM greet before the engine speaks for it).
        message: Text to speak when preempting.
        response: Rich response parts to deliver with a preempted message.
        calls: Tool calls to run first, in order.
        asks: Slots the bot asks for this turn.
        events: Debug entries of this invocation.
    """

    phase: Phase
    status: RunStatus
    decision: Decision | None = None
    visible_tools: frozenset[str] = frozenset()
    hidden_tools: frozenset[str] = frozenset()
    directive: str = ""
    hints: tuple[Hint, ...] = ()
    suffix: str = ""
    preempt: bool = False
    force_preempt: bool = False
    message: str = ""
    response: tuple[ResponsePart, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    asks: tuple[str, ...] = ()
    events: tuple[DebugEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class EngineStep:
    """What one engine step decided: an action and the state after it."""

    action: Action
    state: SessionState
