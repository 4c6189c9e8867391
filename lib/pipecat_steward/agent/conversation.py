"""A synchronous conversation driver: the engine's invocation loop without Pipecat.

``Conversation.turn`` plays one caller turn the way the Pipecat seam does: run the engine, run
the calls it asks for (executors, the auto-confirm, escalation calls), speak preempted messages,
or let the (scripted) LLM act — its tool calls are routed and the engine re-invoked — until the
bot has spoken. Tests, the demo and the SGD replay use it; it is also the reference for what
the seam must do.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pipecat_steward.agent.dispatch import ToolFn, dispatch, execute
from pipecat_steward.core.slots import (
    Action,
    Chooser,
    CompiledFlow,
    Step,
    ToolCall,
    confirm_pending,
    step,
)
from pipecat_steward.core.slots.action import DebugEntry
from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import StateError

__all__ = ["BotUtterance", "Call", "Conversation", "Inference", "LLMPolicy", "TurnRecord"]

Source = Literal["llm", "preempt", "announce", "note"]
Outcome = Literal["ok", "error", "refused"]
_MAX_INVOCATIONS = 50


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the LLM makes (or an executor the engine fires), with its outcome."""

    name: str
    args: Mapping[str, Any] = field(default_factory=lambda: {})
    outcome: Outcome = "ok"
    result: Mapping[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class Inference:
    """What the LLM does in one inference: tool calls, then (optionally) text."""

    calls: Sequence[Call] = ()
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
    llm_calls: list[Call] = field(default_factory=lambda: [])
    fired: list[Call] = field(default_factory=lambda: [])
    bot: list[BotUtterance] = field(default_factory=lambda: [])
    events: list[DebugEntry] = field(default_factory=lambda: [])
    payloads: list[dict[str, Any]] = field(default_factory=lambda: [])
    gates: list[dict[str, Any]] = field(default_factory=lambda: [])

    @property
    def said(self) -> str:
        return " ".join(u.text for u in self.bot)


def say_directive(action: Action, index: int) -> Inference:
    """The default LLM: calls nothing and relays the directive."""
    return Inference(say=action.directive or "How can I help?")


class Conversation:
    """Drive one session through the engine, synchronously."""

    def __init__(
        self,
        flow: CompiledFlow,
        tools: Mapping[str, ToolFn] | None = None,
        *,
        state: SessionState | None = None,
        rng: Chooser | None = None,
        event_data: Mapping[str, Any] | None = None,
        channel: str | None = None,
    ) -> None:
        self.flow = flow
        self.tools: Mapping[str, ToolFn] = dict(tools or {})
        self.state = state or SessionState()
        self.rng: Chooser = rng or random.Random(0)
        self.event_data = dict(event_data or {})
        self.channel = channel
        self.bot_spoke = False

    def turn(
        self, user_text: str, llm: LLMPolicy | Sequence[Inference] = say_directive
    ) -> TurnRecord:
        """Play one caller turn; ``llm`` scripts the model's inferences (list or policy)."""
        policy = _as_policy(llm)
        record = TurnRecord(user_text)
        result = self._step(user_text)
        for index in range(_MAX_INVOCATIONS):
            record.actions.append(result.action)
            record.events.extend(result.action.events)
            self.state = result.state
            if not self._act(result.action, policy, index, record, user_text):
                return record
            result = self._step("")
        raise StateError(f"turn did not settle after {_MAX_INVOCATIONS} engine invocations")

    def _step(self, user_text: str) -> Step:
        return step(
            self.flow,
            self.state,
            user_text,
            rng=self.rng,
            event_data=self.event_data,
            channel=self.channel,
            first_turn=not self.bot_spoke,
        )

    def _act(
        self, action: Action, policy: LLMPolicy, index: int, record: TurnRecord, user_text: str
    ) -> bool:
        """Carry out ``action``; True when the engine must be invoked again."""
        if action.calls:
            for call in action.calls:
                self._run_call(call, record)
            if action.message:
                self._say(record, action.message, "preempt")
            # Executor results and confirmations need the engine again; an exit call does not.
            return any(c.kind != "then" for c in action.calls)
        if action.preempt:
            if action.message:
                self._say(record, action.message, "preempt")
            return False
        return self._llm(action, policy(action, index), record, user_text)

    def _run_call(self, call: ToolCall, record: TurnRecord) -> None:
        if call.kind == "confirm":
            routed = confirm_pending(self.flow, self.state)
        elif call.kind == "executor":
            routed = execute(self.flow, self.state, self.tools, call.name, call.args)
        else:
            fn = self.tools.get(call.name)
            result = dict(fn(**call.args)) if fn is not None else {}
            record.fired.append(Call(call.name, dict(call.args), "ok", result))
            return
        self.state = routed.state
        record.fired.append(
            Call(call.name, dict(call.args), "ok" if routed.ok else "error", routed.reply)
        )

    def _llm(
        self, action: Action, inference: Inference, record: TurnRecord, user_text: str
    ) -> bool:
        for call in inference.calls:
            if call.name not in action.visible_tools and call.name in self.flow.tool_names:
                record.llm_calls.append(Call(call.name, call.args, "refused"))
                continue
            routed = dispatch(
                self.flow,
                self.state,
                self.tools,
                call.name,
                call.args,
                user_text=user_text,
                check_visible=False,
            )
            self.state = routed.state
            record.llm_calls.append(
                Call(call.name, call.args, "ok" if routed.ok else "error", routed.reply)
            )
        if inference.say:
            self._say(record, inference.say, "llm")
        return bool(inference.calls)

    def _say(self, record: TurnRecord, text: str, source: Source) -> None:
        record.bot.append(BotUtterance(text, source))
        self.bot_spoke = True


def _as_policy(llm: LLMPolicy | Sequence[Inference]) -> LLMPolicy:
    if callable(llm):
        return llm
    script = list(llm)

    def policy(action: Action, index: int) -> Inference:
        return script.pop(0) if script else say_directive(action, index)

    return policy
