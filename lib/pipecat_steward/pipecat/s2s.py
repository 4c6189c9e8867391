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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import EndWorkerFrame
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame
from pipecat.services.llm_service import FunctionCallParams, LLMService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.slots import Action
from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    AssistantTurnWritten,
    SessionEvent,
    UserTranscript,
)
from pipecat_steward.pipecat.hook import StewardHook
from pipecat_steward.pipecat.providers import Channels, ProviderAdapter, adapter_class, adapter_for
from pipecat_steward.pipecat.steward import Steward

__all__ = ["FREE_REPLY", "NOTE_PREFIX", "Steer", "StewardS2S", "parse_steer", "steer_text"]

NOTE_PREFIX = "[Steward note]"
"""Starts every note, so a provider that turns notes into user text (Gemini, Nova) shows
the model where it came from."""

FREE_REPLY = "Reply to the caller in your own words."
"""The note that asks for a reply when the engine has nothing to direct (``respond`` only)."""

_MAX_CASCADE = 20
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


@dataclass(slots=True)
class _Outcome:
    """The engine's cascade for one trigger: the last action and what it preempted with."""

    action: Action
    spoken: list[str] = field(default_factory=lambda: [])
    llm_runs: bool = True

    @property
    def steer(self) -> Steer:
        return Steer(" ".join(self.spoken), self.action.directive if self.llm_runs else "")


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

    def attach(self, llm: LLMService) -> StewardHook:
        """Refuse a speech-to-speech service (use ``attach_s2s``); cascaded LLMs as ``Steward``."""
        if adapter_class(llm).speech_to_speech:
            raise TypeError(f"{type(llm).__name__} is speech-to-speech: use attach_s2s(llm)")
        return super().attach(llm)

    def attach_s2s(
        self, llm: LLMService, *, respond: bool | None = None, catch_all: bool = True
    ) -> StewardS2S:
        """Register every steward tool's handler on ``llm`` and steer it from session events.

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
        self.llm, self.provider = llm, adapter_for(llm)
        self.respond = self.provider.needs_response_request() if respond is None else respond
        for name in self.tools.schemas:
            llm.register_function(name, self._handle_tool)
        for name in self.tools.agent_schemas:
            llm.register_function(name, self._handle_tool)
        if catch_all:
            llm.register_function(None, self._handle_tool)
        self.provider.advertise_tools(self.all_tools())
        self._supervise(llm)
        return self

    async def on_caller_turn(self, text: str) -> None:
        """Run the engine on a caller's final transcript and deliver its steer as a note."""
        async with self._lock:
            first = self._caller_turns == 0
            self._caller_turns += 1
            outcome = await self._advance(text, first_turn=first)
            await self._update_session(outcome)
            await self._note(outcome.steer)
            await self._exits()

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
            statuses = self.session.take_status()
        for status in statuses:  # checklist status for the client, as the cascade sends it
            await self._llm.queue_frame(RTVIServerMessageFrame(data=status))
        await self._provider.send_tool_result(params, result)

    async def tool_result(
        self, name: str, args: dict[str, Any], call_id: str | None = None
    ) -> dict[str, Any]:
        """Route one tool call; the engine's next steer rides in the result.

        The agent's own tools go through the procedure gate (``agent_tool_call``); steward
        tools, and any other name, through ``tool_call``, which refuses what is not visible.
        """
        if name in self.tools.agent_schemas:
            call = await self.session.agent_tool_call(name, args, call_id)
        else:
            call = self.session.tool_call(name, args)
        result = dict(call.result)
        if call.outcome == "refused":
            steer = Steer("", str(result.get("directive", "")))
        else:
            outcome = await self._advance("", first_turn=False)
            await self._update_session(outcome)
            await self._exits()
            steer = outcome.steer
        self._expect(steer)
        self.steers.append(("result", steer))
        return {**result, "next": steer_text(steer)}

    async def _advance(self, user_text: str, *, first_turn: bool) -> _Outcome:
        """Run the engine, carrying out executor/confirm calls, until the LLM is to speak."""
        outcome: _Outcome | None = None
        for _ in range(_MAX_CASCADE):
            action = self.session.decide(user_text, first_turn=first_turn)
            user_text = ""
            outcome = _Outcome(action, outcome.spoken if outcome else [])
            await self._deliver_payloads(action)
            if not (action.preempt or action.calls):
                return outcome
            outcome.llm_runs = False
            if not await self._carry_out(action, outcome.spoken):
                break
        assert outcome is not None
        return outcome

    async def _carry_out(self, action: Action, spoken: list[str]) -> bool:
        """Run the action's calls; True when the engine must run again."""
        for call in action.calls:
            await self.session.run_call(call)
        if action.message:
            spoken.append(action.message)
        return any(c.kind != "then" for c in action.calls)

    async def _exits(self) -> None:
        """Run the hand-overs; an ``end_session`` part ends the call after the model's reply."""
        await self.session.run_exits()
        if self.session.ending and not self.session.ended:
            self.session.ended = True
            self._end_after_reply = True

    async def _update_session(self, outcome: _Outcome) -> None:
        """Send the visible tools and the instruction suffix where the service takes them."""
        if self.provider is None:
            return
        action = outcome.action
        system = f"{self.agent.prompt}\n\n{action.suffix}".strip() if action.suffix else ""
        await self.provider.update_session(
            tools=self.tools.tools_for(action.visible_tools),
            instructions=system or self.agent.prompt,
        )

    async def _deliver_payloads(self, action: Action) -> None:
        parts = self.session.take_payloads(action)
        if parts:
            message = RTVIServerMessageFrame(data={"type": "steward_response", "parts": parts})
            await self._llm.queue_frame(message)

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
        if self.llm is None:
            return
        if isinstance(event, UserTranscript) and event.source == "s2s" and event.text.strip():
            await self.on_caller_turn(event.text.strip())
        elif isinstance(event, AssistantTextComplete) and event.text.strip():
            self._record_bot(" ".join(event.text.split()))
            if self._end_after_reply:  # the goodbye has been spoken: end the pipeline
                self._end_after_reply = False
                await self._llm.queue_frame(EndWorkerFrame(reason="end_session"))
        elif isinstance(event, AssistantTurnWritten):
            await self.session.save()  # a turn boundary, as in the cascade

    def _record_bot(self, text: str) -> None:
        """Record a reply: a leading preempted text as ``preempt``, the rest as ``llm``."""
        if self._said and text.startswith(said := " ".join(self._said[0].split())):
            self._said.pop(0)
            self.session.spoke(said, "preempt")
            text = text[len(said) :].strip()
        if text:
            self.session.spoke(text, "llm")
