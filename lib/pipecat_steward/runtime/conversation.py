"""A synchronous conversation: one caller turn at a time, through the engine's real loop.

``Conversation.turn`` runs the same ``Driver`` the Pipecat hook hosts, with a scripted model in
place of an LLM service: the engine decides, the calls it asks for run, preempted messages are
spoken, and the model's tool calls (refused when not visible) re-invoke the engine until the
bot has spoken. Engine tests, the demo and the SGD replay use it.
"""

from __future__ import annotations

import asyncio
import atexit
import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import Action, Chooser, CompiledFlow, ToolCall
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.dispatch import ToolFn
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.records import (
    BotUtterance,
    Inference,
    LLMPolicy,
    Outcome,
    RecordedCall,
    Source,
    TurnRecord,
)
from pipecat_steward.runtime.session import StewardSession

__all__ = [
    "BotUtterance",
    "RecordedCall",
    "Conversation",
    "Inference",
    "LLMPolicy",
    "Outcome",
    "Source",
    "TurnRecord",
    "say_directive",
]


def say_directive(action: Action, index: int) -> Inference:
    """The default LLM: calls nothing and relays the directive."""
    return Inference(say=action.directive or "How can I help?")


class _PolicyHost:
    """The driver's host: a scripted model decides each inference."""

    def __init__(self, conversation: Conversation, policy: LLMPolicy) -> None:
        self.conversation = conversation
        self.session = conversation.session
        self.policy = policy
        self.index = 0

    async def run_llm(self, action: Action) -> None:
        inference = self.policy(action, self.index)
        self.index += 1
        for call in inference.calls:
            if call.name in action.visible_tools:
                self.session.tool_call(call.name, call.args)
            else:
                refused = RecordedCall(call.name, dict(call.args), "refused")
                self.session.turn.llm_calls.append(self.session.recorded(refused))
        if inference.say:
            await self.speak(inference.say, "llm")
        if inference.calls:
            await self.conversation.driver.inference(self, "", first_turn=False, speculative=False)

    async def speak(self, text: str, source: Source = "preempt") -> None:
        if source == "llm":  # the driver records its own preempts
            self.session.spoke(text, source)
        self.conversation.bot_spoke = True

    async def deliver(self, action: Action) -> None:
        self.session.take_payloads(action)

    def record(self, call: ToolCall, done: RecordedCall) -> None:
        return None

    async def end(self) -> None:
        return None  # the session records that it ended


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
        agent = Agent("conversation", "", flow, dict(tools or {}))
        self.session = StewardSession(
            agent, state=state, rng=rng or random.Random(0), event_data=event_data, channel=channel
        )
        self.driver = Driver(self.session)
        self.bot_spoke = False

    @property
    def flow(self) -> CompiledFlow:
        return self.session.agent.flow

    @property
    def state(self) -> SessionState:
        return self.session.state

    @state.setter
    def state(self, value: SessionState) -> None:
        self.session.state = value

    def turn(
        self, user_text: str, llm: LLMPolicy | Sequence[Inference] = say_directive
    ) -> TurnRecord:
        """Play one caller turn; ``llm`` scripts the model's inferences (list or policy)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return _thread_loop().run_until_complete(self.aturn(user_text, llm))
        raise RuntimeError("Conversation.turn called inside a running event loop: await aturn()")

    async def aturn(
        self, user_text: str, llm: LLMPolicy | Sequence[Inference] = say_directive
    ) -> TurnRecord:
        """Play one caller turn from async code (same as ``turn``)."""
        host = _PolicyHost(self, _as_policy(llm))
        first = not self.bot_spoke
        await self.driver.inference(host, user_text, first_turn=first, speculative=False)
        return self.session.turn


_local = threading.local()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """One event loop per thread for synchronous turns, closed at exit.

    A fresh loop per turn (``asyncio.run``) costs more than the engine's own work per turn.
    """
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
        atexit.register(loop.close)
    return loop


def _as_policy(llm: LLMPolicy | Sequence[Inference]) -> LLMPolicy:
    if callable(llm):
        return llm
    script = list(llm)

    def policy(action: Action, index: int) -> Inference:
        return script.pop(0) if script else say_directive(action, index)

    return policy
