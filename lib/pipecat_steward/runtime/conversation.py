"""A synchronous conversation: one caller turn at a time, through the engine's real loop.

``ScriptedHost`` runs the same ``Driver`` the Pipecat hook hosts, with a scripted model in place
of an LLM service: the engine decides, the calls it asks for run, preempted messages are spoken,
and the model's tool calls (refused when not shown) re-invoke the engine until the bot has
spoken. ``Conversation.turn`` plays a caller turn through it; engine tests, the demo, the SGD
replay and the direct scenario player (``pipecat_steward.testing.direct``) use it.
"""

from __future__ import annotations

import asyncio
import atexit
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import Action, Chooser, CompiledFlow
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
    "ScriptedHost",
    "ScriptedModel",
    "Source",
    "TurnRecord",
    "say_directive",
]


def say_directive(action: Action, index: int) -> Inference:
    """The default LLM: calls nothing and relays the directive."""
    return Inference(say=action.directive or "How can I help?")


ScriptedModel = Callable[[Action], "Inference | None"]
"""A scripted model: one inference for the engine's action (None: the model says nothing)."""


class ScriptedHost:
    """The driver's host when the model is a function: the pipeline's loop without Pipecat.

    Per inference the driver decides and the model answers: its text is recorded, then each of
    its calls enters through ``StewardSession.handle_tool`` (a tool not visible now is refused
    there with the current directive, as a Pipecat service's handlers refuse it). The engine
    runs again after an inference that made a call, as pipecat runs the LLM again after tool
    results; an inference without a call ends the turn.

    Attributes:
        driver: The driver of the session.
        model: Answers each inference.
    """

    def __init__(self, driver: Driver, model: ScriptedModel) -> None:
        self.driver = driver
        self.model = model

    @property
    def session(self) -> StewardSession:
        return self.driver.session

    async def turn(self, user_text: str) -> TurnRecord:
        """Play one caller turn (the opening turn when the bot has not spoken yet)."""
        first = not any(u for t in self.session.turns for u in t.bot)
        outcome = await self.driver.inference(user_text, first_turn=first)
        while True:
            inference = await self._infer(outcome.action) if outcome.llm else None
            acted = inference is not None and bool(inference.calls)
            said = inference.say or "" if inference is not None else ""
            await self.driver.complete(outcome, acted=acted, said=said)
            if not acted:
                return self.session.turn
            outcome = await self.driver.inference("", first_turn=False)

    async def _infer(self, action: Action) -> Inference | None:
        """One model inference: its text is said, then its calls enter the session."""
        inference = self.model(action)
        if inference is None:
            return None
        if inference.say:
            self.session.spoke(inference.say, "llm")
        for call in inference.calls:
            await self.session.handle_tool(call.name, call.args)
        return inference


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
        return await ScriptedHost(self.driver, _as_model(llm)).turn(user_text)


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


def _as_model(llm: LLMPolicy | Sequence[Inference]) -> ScriptedModel:
    """A turn's scripted model: the policy with its inference index, or the list in order."""
    script = None if callable(llm) else list(llm)
    policy: LLMPolicy = llm if callable(llm) else say_directive
    index = 0

    def model(action: Action) -> Inference:
        nonlocal index
        index += 1
        if script:
            return script.pop(0)
        return policy(action, index - 1)

    return model
