"""The before-inference hook: the engine runs at the LLM service on every inference.

Only at the service is every inference seen: the first one of a
caller turn arrives downstream from the user aggregator, the re-inference after a tool result
upstream from the assistant aggregator. ``attach`` wraps a service instance's ``process_frame``;
``StewardLLMMixin`` does the same for a subclass. On each ``LLMContextFrame`` the engine runs;
then either the full visible tool set and the instruction suffix are set and the real inference
runs, or the inference is skipped and an LLM-shaped reply is emitted (preemption). Executors the
engine fires run first and are written into the context as tool-call/tool-result pairs,
cascading until a question, a readback or a terminal state. Speculative frames get tools and
suffix but never a preempt, and never change the session.

The hook is a thin host of ``pipecat_steward.runtime.driver.Driver``: the driver decides and
returns an outcome; the hook carries it out with pipecat frames.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import (
    EndWorkerFrame,
    Frame,
    FunctionCallFromLLM,
    LLMContextFrame,
    LLMTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.llm_service import LLMService

from pipecat_steward.core.slots import Action
from pipecat_steward.pipecat.client_messages import send_client_messages
from pipecat_steward.pipecat.instruction import service_instruction, set_service_instruction
from pipecat_steward.pipecat.preempt import emit_reply, record_tool_exchange
from pipecat_steward.pipecat.tools import StewardTools
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.session import StewardSession

__all__ = ["StewardHook", "StewardLLMMixin", "attach"]

ProcessFrame = Callable[[Frame, FrameDirection], Awaitable[None]]
ApplySystem = Callable[[str], Awaitable[None]]


@dataclass
class _Shared:
    """Bookkeeping the hooks of one session share (the fallback pair uses two hooks).

    ``applied`` is the instruction the service holds (None: not known); ``applying`` makes each
    comparison with it and the update that follows one step, so an instruction prepared ahead
    and an inference's own never interleave. ``inferences`` counts the inferences begun and
    ``busy`` those not finished: a prepared instruction is applied only while neither moved.
    """

    seen_user: int = -1
    applied: str | None = None
    applying: asyncio.Lock = field(default_factory=asyncio.Lock)
    inferences: int = 0
    busy: int = 0
    preparing: asyncio.Task[None] | None = None
    tool_calls: int = 0
    said: list[str] = field(default_factory=lambda: [])


class StewardHook:
    """Runs the engine before each inference of one LLM service (a ``Driver`` host)."""

    def __init__(
        self,
        session: StewardSession,
        tools: StewardTools,
        llm: FrameProcessor,
        base_prompt: str,
        *,
        apply_system: ApplySystem | None = None,
        driver: Driver | None = None,
        shared: _Shared | None = None,
    ) -> None:
        self.session = session
        self.tools = tools
        self.llm = llm
        self.base_prompt = base_prompt
        self.apply_system = apply_system or self._update_llm_settings
        self.driver = driver or Driver(session)
        self._shared = shared or _Shared()
        self._last_system: tuple[str | None, str | None, str] = (None, None, "")
        # The service itself (None for a processor beside it): its responses are seen here.
        self._service = llm if isinstance(llm, LLMService) else None
        # Applied to the service itself, its instruction is read there: a change made by anyone
        # else (the app's own settings update) is seen. Sent on as frames, only the record is.
        self._read_from = self._service if apply_system is None else None
        if self._service is not None:
            _observe(self._service, self._shared)

    @property
    def preempted(self) -> list[str]:
        """Texts spoken by preemption that the relay has not reported yet."""
        return self.driver.preempted

    def with_emitter(self, emitter: FrameProcessor, apply_system: ApplySystem) -> StewardHook:
        """A twin hook emitting from another processor (the two-processor fallback).

        The twin shares this hook's session, tools, driver and seen-turn bookkeeping.
        """
        twin = StewardHook(
            self.session,
            self.tools,
            emitter,
            self.base_prompt,
            apply_system=apply_system,
            driver=self.driver,
        )
        twin._shared = self._shared  # pyright: ignore[reportPrivateUsage]
        return twin

    def sibling(self, llm: LLMService) -> StewardHook:
        """A hook of its own for ``llm``, one more service steering this hook's session.

        For the services of a pipecat ``LLMSwitcher``: only the active one infers, and its hook
        shares this one's session, tools, driver and seen-turn bookkeeping, so a switch between
        two inferences is no new conversation. Its instruction is applied to its own service.
        """
        return StewardHook(
            self.session,
            self.tools,
            llm,
            self.base_prompt,
            driver=self.driver,
            shared=self._shared,
        )

    async def on_context(
        self, frame: LLMContextFrame, direction: FrameDirection, run: ProcessFrame
    ) -> None:
        """Handle one inference request; ``run`` performs the real inference.

        The driver decides; this host carries its outcome out in the pipeline: client messages,
        the engine's tool exchanges written into the context, the preempted text emitted as an
        LLM-shaped reply, the real inference with the action's tools and suffix, then what the
        driver completes the inference with.
        """
        shared = self._shared
        shared.inferences += 1
        shared.busy += 1
        try:
            await self._on_context(frame, direction, run)
        finally:
            shared.busy -= 1

    async def _on_context(
        self, frame: LLMContextFrame, direction: FrameDirection, run: ProcessFrame
    ) -> None:
        await self.driver.settle()
        context = frame.context
        messages = context.get_messages()
        speculative = bool(getattr(frame, "speculation", False))
        user_text = self._new_user_text(messages, speculative)
        first = not any(_role(m) == "assistant" for m in messages)
        outcome = await self.driver.inference(user_text, first_turn=first, speculative=speculative)
        await self.send(outcome.messages)
        for exchange in outcome.exchanges:
            record_tool_exchange(
                context, exchange.call.name, dict(exchange.call.args), exchange.done.result
            )
        if outcome.say:
            await self.speak(outcome.say)
        acted, said = False, ""
        if outcome.llm:
            acted, said = await self._run_llm(outcome.action, frame, direction, run)
        done = await self.driver.complete(
            outcome,
            acted=acted,
            said=said,
            record_when_heard=True,
            chained=acted and self._service is not None,
        )
        await self.send(done.messages)
        if done.say:
            await self.speak(done.say)
        if done.end:
            await self.end()

    async def _run_llm(
        self, action: Action, frame: LLMContextFrame, direction: FrameDirection, run: ProcessFrame
    ) -> tuple[bool, str]:
        """Set the whole tool set and the instruction suffix, then run the real inference.

        Returns whether the model called a tool in its response, and the text it said.
        """
        self.tools.offer(frame.context, action.visible_tools)
        await self._hold_instruction(self._system(action))
        started, self._shared.said = self._shared.tool_calls, []
        await run(frame, direction)
        # Where the inference runs elsewhere (the two-processor fallback) its response is not
        # seen here: count it as acting, so code never talks over the model.
        acted = self._shared.tool_calls != started or self._service is None
        return acted, "".join(self._shared.said)

    async def _hold_instruction(self, system: str) -> None:
        """Have the service hold ``system`` before the inference runs.

        Usually it does already (prepared while the turn ended, or unchanged since the last
        inference); with no update under way, that needs no turn of the lock.
        """
        applying = self._shared.applying
        if not applying.locked() and self._holds(system):
            return
        async with applying:
            if not self._holds(system):  # an unchanged instruction needs no update
                await self._apply(system)

    def prepare(self, action: Action) -> None:
        """Apply the instruction an anticipated ``action`` runs the model with, ahead of time.

        Called while the caller's turn ends, with the step anticipated for their words: the
        inference that uses that step then finds its instruction applied and goes straight to
        the model. Applying an instruction changes the service's settings (see
        ``pipecat_steward.pipecat.instruction``); done here it is off the way from the caller's
        words to the request. Only while no inference has begun since: an inference applies its
        own instruction, and one begun first is never overtaken. An action that acts before any
        inference (a preempt, engine calls) prepares nothing.
        """
        shared = self._shared
        if action.preempt or action.calls or shared.busy:
            return
        system = self._system(action)
        if not self._holds(system):
            epoch = shared.inferences
            shared.preparing = asyncio.get_running_loop().create_task(self._prepare(system, epoch))

    async def _prepare(self, system: str, epoch: int) -> None:
        shared = self._shared
        async with shared.applying:
            if shared.inferences == epoch and not shared.busy and not self._holds(system):
                await self._apply(system)

    def _holds(self, system: str) -> bool:
        """Whether the service's instruction is ``system`` (as far as this hook can tell)."""
        if self._read_from is not None:
            return service_instruction(self._read_from) == system
        return self._shared.applied == system

    async def _apply(self, system: str) -> None:
        """Update the service's instruction (the caller holds ``applying``).

        The record says "not known" until the update is done: an update that fails leaves the
        next inference to apply its instruction again.
        """
        self._shared.applied = None
        await self.apply_system(system)
        self._shared.applied = system

    def _system(self, action: Action) -> str:
        """The whole instruction ``action`` runs the model with.

        The last one is kept with the suffix and prompt it was made of: an anticipated action
        reaches its inference with the very suffix ``prepare`` saw, and the service then holds
        the very string this returns, so comparing the two is an identity check.
        """
        suffix, base = action.suffix, self.base_prompt
        # Held here, so `is` never meets a reused id.
        last_suffix, last_base, system = self._last_system
        if suffix is not last_suffix or base is not last_base:
            system = f"{base}\n\n{suffix}".strip() if suffix else base
            self._last_system = (suffix, base, system)
        return system

    async def speak(self, text: str) -> None:
        """Emit an LLM-shaped reply instead of the inference."""
        await emit_reply(self.llm, text)

    async def send(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Send client messages (checklist status, rich response parts) as RTVI server messages."""
        if messages:  # most inferences have none: no coroutine on the way to the inference
            await send_client_messages(self.llm, messages)

    async def end(self) -> None:
        """End the pipeline after the reply: an ``EndWorkerFrame`` behind the spoken frames."""
        await self.llm.push_frame(EndWorkerFrame(reason="end_session"), FrameDirection.DOWNSTREAM)

    async def _update_llm_settings(self, system: str) -> None:
        # Applied before this request is built. An instruction the service already holds would
        # change nothing: it is not applied again.
        llm = self._service
        if llm is not None and service_instruction(llm) != system:
            await set_service_instruction(llm, system)

    def _new_user_text(self, messages: Sequence[Any], speculative: bool) -> str:
        for index in range(len(messages) - 1, -1, -1):
            if _role(messages[index]) == "user":
                if index <= self._shared.seen_user:
                    return ""
                if not speculative:
                    self._shared.seen_user = index
                return _text(messages[index])
        return ""


def _observe(llm: LLMService, shared: _Shared) -> None:
    """Watch what ``llm``'s responses do: count those that call tools, collect their text."""
    run_calls, push = llm.run_function_calls, llm.push_frame

    # Plain functions returning the service's own coroutines: every push of the service
    # passes here, and the caller awaits what they return (no coroutine frame of their own).
    def run_function_calls(function_calls: Sequence[FunctionCallFromLLM]) -> Awaitable[None]:
        if function_calls:
            shared.tool_calls += 1
        return run_calls(function_calls)

    def push_frame(
        frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM
    ) -> Awaitable[None]:
        if isinstance(frame, LLMTextFrame):
            shared.said.append(frame.text)
        return push(frame, direction)

    llm.run_function_calls = run_function_calls  # type: ignore[method-assign]
    llm.push_frame = push_frame  # type: ignore[method-assign]


def _role(message: Any) -> str:
    return str(message.get("role", "")) if isinstance(message, dict) else ""


def _text(message: Any) -> str:
    content = message.get("content", "")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def attach(llm: LLMService, hook: StewardHook) -> None:
    """Wrap ``llm``'s ``process_frame`` so ``hook`` sees every ``LLMContextFrame``."""
    original: ProcessFrame = llm.process_frame

    def process_frame(frame: Frame, direction: FrameDirection) -> Awaitable[None]:
        # Returns the coroutine the service awaits (see ``_observe``).
        if isinstance(frame, LLMContextFrame):
            return hook.on_context(frame, direction, original)
        return original(frame, direction)

    llm.process_frame = process_frame  # type: ignore[method-assign]


class StewardLLMMixin:
    """Mix in before any pipecat LLM service: ``class MyLLM(StewardLLMMixin, OpenAILLMService)``.

    Set ``steward_hook`` before the pipeline starts (``Steward.attach`` does it).
    """

    steward_hook: StewardHook | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        parent: ProcessFrame = super().process_frame  # type: ignore[misc]
        if isinstance(frame, LLMContextFrame) and self.steward_hook is not None:
            await self.steward_hook.on_context(frame, direction, parent)
        else:
            await parent(frame, direction)
