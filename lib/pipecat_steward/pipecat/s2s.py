"""``StewardS2S``: the steward for speech-to-speech services (OpenAI Realtime, Gemini Live, Nova Sonic).

The model runs on the provider's side, so no inference can be intercepted. The engine runs
instead when the relay reports a caller's final transcript (upstream, source ``s2s``) and
after every steward tool call, and reaches the model through the channels its service offers,
by way of the service's provider adapter (``pipecat_steward.pipecat.providers``):

- **Veto.** Every steward tool goes through one handler. A tool not visible now is refused
  with an informative result carrying the current directive (``StewardSession.tool_call``);
  the state does not change.
- **Tool-result rider.** After a steward tool call the engine runs again (executors it fires
  run first) and its directive rides in the result as ``next``, the one channel every S2S
  service honours.
- **Notes.** After a caller turn the directive goes in as a note (the adapter's
  ``send_note``); with ``respond`` the note also asks for the reply (providers that do not
  answer by themselves).
- **Session update.** Where the service supports it (OpenAI Realtime), the adapter sends the
  visible tool set and the instruction suffix (``session.update``).
- **Preemption** becomes a "say exactly" note that asks for a response.

Example::

    steward = StewardS2S.from_folder("bots/bella_notte")
    llm = GeminiLiveLLMService(api_key=..., tools=steward.all_tools())
    steward.attach_s2s(llm)
    worker = PipelineWorker(Pipeline([transport.input(), user_agg, llm, transport.output(),
                                      assistant_agg]), observers=steward.observers)
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import EndWorkerFrame
from pipecat.services.llm_service import FunctionCallParams, LLMService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.slots import Action
from pipecat_steward.pipecat.attachment import claim_service
from pipecat_steward.pipecat.client_messages import send_client_messages
from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    SessionEvent,
    UserTranscript,
)
from pipecat_steward.pipecat.providers import Channels, ProviderAdapter, adapter_for
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.driver import Driver, InferenceOutcome

__all__ = [
    "FREE_REPLY",
    "NOTE_PREFIX",
    "Steer",
    "StewardS2S",
    "parse_steer",
    "steer_of",
    "steer_text",
]

NOTE_PREFIX = "[Steward note]"
"""Starts every note, so a provider that turns notes into user text (Gemini, Nova) shows
the model where it came from."""

FREE_REPLY = "Reply to the caller in your own words."
"""The note that asks for a reply when the engine has nothing to direct (``respond`` only)."""

_SAY = re.compile(r'Say exactly: "(.*?)"(?: Then: (.*))?$', re.S)


@dataclass(frozen=True, slots=True)
class Steer:
    """What the model should do next: words to say verbatim, then a directive.

    Attributes:
        say: Text the engine preempted with; the model must say it word for word.
        directive: What the model should convey after that (empty when it only says ``say``).

    """

    say: str = ""
    directive: str = ""

    def __bool__(self) -> bool:
        return bool(self.say or self.directive)


def steer_text(steer: Steer) -> str:
    """Render a steer as the text of a note or of a tool result's ``next``."""
    if not steer.say:
        return steer.directive
    then = f" Then: {steer.directive}" if steer.directive else ""
    return f'Say exactly: "{steer.say}"{then}'


def parse_steer(text: str) -> Steer:
    """Invert ``steer_text`` (a note's ``NOTE_PREFIX`` is dropped first)."""
    body = text.removeprefix(NOTE_PREFIX).strip()
    if body == FREE_REPLY:
        return Steer()
    match = _SAY.match(body)
    if match:
        return Steer(match.group(1), (match.group(2) or "").strip())
    return Steer("", body)


def steer_of(outcome: InferenceOutcome) -> Steer:
    """The steer of an inference outcome: its preempted text, then the directive if the LLM runs."""
    return Steer(outcome.say, outcome.action.directive if outcome.llm else "")


class StewardS2S(Steward):
    """The steward of one speech-to-speech conversation.

    Build it like ``Steward``, pass ``all_tools()`` to a service whose tools are fixed at
    connect (Gemini Live, Nova Sonic), then ``attach_s2s(llm)`` and give the pipeline worker
    ``observers``.

    Attributes:
        llm: The attached service (after ``attach_s2s``).
        provider: Its provider adapter, chosen once from the service's class.
        channels: Its capability row (the adapter's).
        respond: Whether the steward asks for the reply to each caller turn.
        steers: Every steer delivered, in order, with its channel (``note`` or ``result``).

    """

    reads = (*Steward.reads, UserTranscript)  # the caller's transcripts run the engine here

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Create the steward; arguments as for ``Steward``."""
        super().__init__(*args, **kwargs)
        self.llm: LLMService | None = None
        self.provider: ProviderAdapter | None = None
        self.respond = False
        self.steers: list[tuple[str, Steer]] = []
        self._lock = asyncio.Lock()
        self._said: list[str] = []
        self._caller_turns = 0
        self._end_after_reply = False
        self._answering: InferenceOutcome | None = None

    @classmethod
    def from_folder(cls, folder: str | Path, **kwargs: Any) -> StewardS2S:
        """Load the agent folder (``agent.yaml`` + ``tools.py``) and build its steward."""
        return cls(load_agent(folder), **kwargs)

    def all_tools(self) -> ToolsSchema:
        """Every steward tool (and the app's extra tools), for the service to advertise."""
        tools = self.tools
        schemas = [*tools.schemas.values(), *tools.agent_schemas.values(), *tools.extra]
        return ToolsSchema(standard_tools=schemas)

    @property
    def busy(self) -> bool:
        """Whether the engine is handling a caller turn or a tool call (an executor may be slow)."""
        return self._lock.locked()

    async def idle(self) -> None:
        """Return once the engine is handling no caller turn and no tool call."""
        while self._lock.locked():
            async with self._lock:
                pass

    def attach_s2s(
        self, llm: LLMService, *, respond: bool | None = None, catch_all: bool = True
    ) -> StewardS2S:
        """Register every steward tool's handler on ``llm`` and steer it from session events.

        A steward is attached once, to one speech-to-speech service that has no other steward
        (see ``pipecat_steward.pipecat.attachment``); any other attach is refused.

        Args:
            llm: An OpenAI Realtime, Gemini Live or Nova Sonic service.
            respond: Ask for the reply to each caller turn (the directive note gets
                ``run_llm=True``). Default: only when the service will not reply by itself
                (OpenAI Realtime with ``turn_detection.create_response=False``).
            catch_all: Also answer calls to tools nobody registered (pipecat's catch-all
                handler): they are refused with the directive, as a hidden tool is. Without
                it pipecat drops such a call (Nova Sonic resets the conversation).

        Returns:
            This steward.

        """
        llm = claim_service(self, llm, speech_to_speech=True)
        self.llm, self.provider = llm, adapter_for(llm)
        # The model says a preempt on the provider's side: it is recorded when heard.
        self.driver = Driver(self.session, record_preempts=False)
        self.respond = self.provider.needs_response_request() if respond is None else respond
        for name in self.tools.schemas:
            llm.register_function(name, self._handle_tool)
        for name in self.tools.agent_schemas:
            llm.register_function(name, self._handle_tool)
        if catch_all:
            llm.register_function(None, self._handle_tool)
        self.provider.advertise_tools(self.all_tools())
        self._follow_client(llm)
        self._supervise(llm)
        return self

    async def on_caller_turn(self, text: str) -> None:
        """Run the engine on a caller's final transcript and deliver its steer as a note."""
        async with self._lock:
            first = self._caller_turns == 0
            self._caller_turns += 1
            outcome = await self.driver.inference(text, first_turn=first)
            await self._carry_out(outcome)
            await self._note(steer_of(outcome))
            self._answering = outcome if outcome.llm else None

    async def _carry_out(self, outcome: InferenceOutcome) -> None:
        """Complete an inference at once (the model answers on the provider's side).

        Client messages go out, the visible tools and suffix reach the provider where it takes
        them, and an ``end_session`` ends the call after the model's reply.
        """
        done = await self.driver.complete(outcome, acted=True)
        await send_client_messages(self._llm, [*outcome.messages, *done.messages], queue=True)
        await self._update_session(outcome.action)
        if done.end:
            self._end_after_reply = True

    async def _note(self, steer: Steer) -> None:
        """Deliver a caller turn's steer; a preempt ("say exactly") always asks for a reply."""
        if not (steer or self.respond):
            return
        self._expect(steer)
        self.steers.append(("note", steer))
        text = steer_text(steer) if steer else FREE_REPLY
        await self._provider.send_note(
            f"{NOTE_PREFIX} {text}", run_llm=bool(steer.say) or self.respond
        )

    async def _handle_tool(self, params: FunctionCallParams) -> None:
        async with self._lock:
            name, args = params.function_name, dict(params.arguments)
            result = await self.tool_result(name, args, params.tool_call_id)
        await self._provider.send_tool_result(params, result)

    async def tool_result(
        self, name: str, args: dict[str, Any], call_id: str | None = None
    ) -> dict[str, Any]:
        """Route one tool call through the session's one tool entry; the next steer rides in the result.

        The agent's own tools go through the procedure gate; steward tools, and any other name,
        are refused when not visible now (``StewardSession.handle_tool``).
        """
        self._answering = None  # the model acted: the next inference sees the result
        call = await self.session.handle_tool(name, args, call_id)
        result = dict(call.result)
        # As in the cascade, the engine runs again after every tool result, a refusal too.
        outcome = await self.driver.inference("", first_turn=False)
        await self._carry_out(outcome)
        steer = steer_of(outcome)
        self._expect(steer)
        self.steers.append(("result", steer))
        return {**result, "next": steer_text(steer)}

    async def _update_session(self, action: Action) -> None:
        """Send the visible tools and the instruction suffix where the service takes them."""
        if self.provider is None:
            return
        system = f"{self.agent.prompt}\n\n{action.suffix}".strip() if action.suffix else ""
        await self.provider.update_session(
            tools=self.tools.tools_for(action.visible_tools),
            instructions=system or self.agent.prompt,
        )

    def _expect(self, steer: Steer) -> None:
        if steer.say:
            self._said.append(steer.say)

    @property
    def channels(self) -> Channels | None:
        """The attached service's capability row (``None`` before ``attach_s2s``)."""
        return self.provider.channels if self.provider else None

    @property
    def _provider(self) -> ProviderAdapter:
        if self.provider is None:
            raise RuntimeError("attach_s2s(llm) first")
        return self.provider

    @property
    def _llm(self) -> LLMService:
        if self.llm is None:
            raise RuntimeError("attach_s2s(llm) first")
        return self.llm

    async def _on_event(self, event: SessionEvent) -> None:
        """The caller's transcripts run the engine; the model's replies are recorded here.

        Everything else (the turn-boundary save) is the base steward's.
        """
        if self.llm is None:
            await super()._on_event(event)
        elif isinstance(event, UserTranscript) and event.source == "s2s" and event.text.strip():
            await self.on_caller_turn(event.text.strip())
        elif isinstance(event, AssistantTextComplete) and event.text.strip():
            self._record_bot(" ".join(event.text.split()))
            await self._follow_up(event.text)
            if self._end_after_reply:  # the goodbye has been spoken: end the pipeline
                self._end_after_reply = False
                await self._llm.queue_frame(EndWorkerFrame(reason="end_session"))
        else:
            await super()._on_event(event)

    async def _follow_up(self, said: str) -> None:
        """Have the model say the question a firm steer-back left open, when it did not act.

        Runs when the provider's response to a caller turn is done; a tool call in between
        clears it (``Driver.follow_up``).
        """
        outcome, self._answering = self._answering, None
        question = self.driver.follow_up(outcome, said) if outcome is not None else ""
        if question:
            await self._note(Steer(question))

    def _record_bot(self, text: str) -> None:
        """Record a reply: a leading preempted text as ``preempt``, the rest as ``llm``."""
        if self._said and text.startswith(said := " ".join(self._said[0].split())):
            self._said.pop(0)
            self.session.spoke(said, "preempt")
            text = text[len(said) :].strip()
        if text:
            self.session.spoke(text, "llm")
