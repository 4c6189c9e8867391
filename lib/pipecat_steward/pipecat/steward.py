"""``Steward``: build the steward for an agent and attach it to a pipeline in a few lines.

Example::

    steward = Steward.from_folder("bots/bella_notte")
    llm = OpenAILLMService(api_key=..., settings=OpenAILLMService.Settings(model="gpt-4.1-mini"))
    steward.attach(llm)
    context = LLMContext()
    user_agg, assistant_agg = LLMContextAggregatorPair(context)
    pipeline = Pipeline([transport.input(), stt, user_agg, llm, tts, transport.output(), assistant_agg])
    worker = PipelineWorker(pipeline, observers=steward.observers)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.observers.base_observer import BaseObserver
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.llm_service import LLMService
from pipecat.utils.string import TextPartForConcatenation, concatenate_aggregated_text

from pipecat_steward.agent.loader import Agent, as_agent, load_agent
from pipecat_steward.events.live import attach_events
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.pipecat.attachment import claim_services
from pipecat_steward.pipecat.client_messages import follow_client, send_client_messages
from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    AssistantTurnWritten,
    SessionEvent,
    UserInterimTranscript,
    UserTranscript,
)
from pipecat_steward.pipecat.hook import StewardHook, StewardLLMMixin, attach
from pipecat_steward.pipecat.relay import StewardRelay
from pipecat_steward.pipecat.tools import StewardTools
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.engine import SessionOptions, open_session
from pipecat_steward.runtime.options import SESSION_OPTIONS, Check, check_options, instance
from pipecat_steward.runtime.session import ConflictListener, StewardSession

if TYPE_CHECKING:
    from pipecat_steward.pipecat.extractor import EntityExtractor
    from pipecat_steward.pipecat.monitor import ProcedureMonitor
    from pipecat_steward.pipecat.supervise import Supervision

__all__ = ["ANTICIPATE_AFTER_S", "Steward"]


def _tool_schemas(value: object) -> bool:
    # A collection, not any iterable: checking a generator would use it up.
    return (
        isinstance(value, Collection)
        and not isinstance(value, (str, bytes))
        and all(isinstance(tool, FunctionSchema) for tool in value)
    )


def _fresh_publisher(value: object) -> bool:
    # One publisher records one call from its start: a publisher that has emitted (another
    # steward's call_started, say) would mix two calls, and each steward would send the
    # other's events to its own client; a closed one would drop every event unsaid.
    return isinstance(value, EventPublisher) and not value.closed and value.emitted == 0


STEWARD_OPTIONS: dict[str, Check] = {
    **SESSION_OPTIONS,
    "supervise": instance(bool, "True or False", none=False),
    "events": Check(
        _fresh_publisher,
        "a new EventPublisher, open and with nothing emitted (one per call, e.g. from "
        "EventHub.open)",
    ),
    "extra_tools": Check(_tool_schemas, "a list of pipecat FunctionSchema", none=False),
}
"""What ``Steward`` (and ``StewardS2S``) checks as it is made: its own options and the session's."""

_Words = tuple[int, list[TextPartForConcatenation]]
"""A caller turn and its transcripts so far, as the user aggregator will join them."""

ANTICIPATE_AFTER_S = 0.005
"""How long after a transcript (final or interim) the engine's step for it runs (see
``Steward``)."""


class Steward:
    """The steward of one conversation: engine session, tools, hook and relay.

    ``attach`` also attaches the procedure monitor and the entity extractor when the agent
    has work for them and a logic_slm resolves with its credentials (``supervise=False`` or
    ``STEWARD_MONITOR_ENABLED=0`` turn that off). A steward has at most one monitor and one
    extractor: attaching another one by hand replaces the automatic one.

    The steward sends its messages for the app's client (checklist status, rich response parts,
    conversation events, a conflict) as RTVI server messages when a client can read them: by
    default, when the pipeline its service is set up in has pipecat's RTVI observer (a
    ``PipelineWorker`` adds one unless ``enable_rtvi=False``). ``client_messages=True`` always
    sends them (an app that forwards them its own way); ``client_messages=False`` never does,
    for a call no client reads (a telephone call): each message would cross the pipeline for
    nothing. The conversation events still reach the store and the subscribers.
    """

    reads: tuple[type[SessionEvent], ...] = (AssistantTurnWritten, AssistantTextComplete)
    """The relay events ``_on_event`` handles: the bus wakes it for these only. The caller's
    transcripts are noted in place as they are published (``_anticipate``, a bus tap), and so
    are the interim ones (``_anticipate_interim``), which never reach the bus."""

    def __init__(
        self,
        agent: Agent | str | Path,
        *,
        extra_tools: Collection[FunctionSchema] = (),
        clock: Callable[[], str] | None = None,
        call_id: str | None = None,
        supervise: bool = True,
        events: EventPublisher | None = None,
        **options: Unpack[SessionOptions],
    ) -> None:
        mine = {"supervise": supervise, "events": events, "extra_tools": extra_tools}
        check_options({**mine, "clock": clock, "call_id": call_id, **options}, STEWARD_OPTIONS)
        self.agent = agent = as_agent(agent)  # an agent folder's path, too
        self.supervise = supervise
        self.monitor: ProcedureMonitor | None = None
        self.extractor: EntityExtractor | None = None
        self.supervision: Supervision | None = None
        self.session: StewardSession = open_session(agent, clock=clock, call_id=call_id, **options)
        # Not told: the pipeline says whether a client reads the messages (``follow_client``).
        self._follows_client = "client_messages" not in options
        self.tools = StewardTools(self.session, extra_tools)
        self.driver = Driver(self.session)
        self.relay = StewardRelay(turns=self.session.caller_turns)
        self.relay.bus.subscribe(self._on_event, name="steward-trace", kinds=self.reads)
        self.relay.bus.tap(self._anticipate, kinds=(UserTranscript,))
        self.relay.on_interim(self._anticipate_interim)
        self.events = attach_events(self, events)  # the call's conversation events (docs/events.md)
        self._hooks: list[StewardHook] = []  # one per service attached (see ``hook``)
        self._switcher: LLMSwitcher | None = None
        # The open caller turn's final transcripts, as the user aggregator will join them.
        self._heard: _Words = (0, [])
        # The words to anticipate: those finals, then the interim guess when one came since.
        self._latest: _Words = self._heard
        if self.session.sends_client_messages:  # told never to send: no listener
            self.session.conflict_listeners.append(self._announce_conflict)

    @classmethod
    def from_folder(cls, folder: str | Path, **kwargs: Any) -> Steward:
        """Load the agent folder (``agent.yaml`` + ``tools.py``) and build its steward."""
        return cls(load_agent(folder), **kwargs)

    @property
    def observers(self) -> list[BaseObserver]:
        """Observers to give the pipeline worker."""
        return [self.relay]

    def attach(self, llm: LLMService | LLMSwitcher) -> StewardHook:
        """Register the steward's tools on ``llm`` and hook the engine before its inferences.

        A steward is attached once, to one cascaded LLM service that has no other steward
        (see ``pipecat_steward.pipecat.attachment``); any other attach is refused. A pipecat
        ``LLMSwitcher`` counts as one service: each of its services gets the tools and a hook
        of its own over the one session, and ``hook`` is the active service's.

        Returns:
            The hook of ``llm`` (of a switcher's first service).
        """
        services = claim_services(self, llm, speech_to_speech=False)
        first = StewardHook(
            self.session, self.tools, services[0], self.agent.prompt, driver=self.driver
        )
        self._hooks = [first, *(first.sibling(service) for service in services[1:])]
        self._switcher = llm if isinstance(llm, LLMSwitcher) else None
        for service, hook in zip(services, self._hooks, strict=True):
            self.tools.register(service)
            _install(service, hook)
        self.relay.ride(services[0])  # reads pushes in place when the pipeline observes it
        self._follow_client(services[0])
        self._supervise(services[0])
        return first

    @property
    def hook(self) -> StewardHook | None:
        """The hook of the service that infers now (None until ``attach``)."""
        if self._switcher is None or len(self._hooks) < 2:
            return self._hooks[0] if self._hooks else None
        active = self._switcher.active_llm
        return next((h for h in self._hooks if h.llm is active), self._hooks[0])

    def serving(self, llm: FrameProcessor) -> FrameProcessor:
        """The service that infers in ``llm``'s place now.

        When ``llm`` is a service of the switcher this steward steers, the switcher's active
        service (what reaches the model, a note or an interruption, must reach that one);
        otherwise ``llm`` itself.
        """
        hook = self.hook  # without a switcher, the one hook: ``llm`` itself when it is hooked
        return hook.llm if hook is not None and any(h.llm is llm for h in self._hooks) else llm

    def on_conflict(self, listener: ConflictListener) -> ConflictListener:
        """Call ``listener`` once when another worker takes this call over (usable as a decorator).

        By then this worker has stopped acting (no tools, no executors) and the client got a
        ``steward_conflict`` RTVI message; the listener ends or hands over the pipeline,
        e.g. ``await worker.cancel()`` or queueing an ``EndFrame``.
        """
        self.session.conflict_listeners.append(listener)
        return listener

    def _follow_client(self, service: FrameProcessor) -> None:
        """Unless told, send client messages as ``service``'s pipeline can deliver them."""
        if self._follows_client:
            follow_client(service, self.session)

    async def _announce_conflict(self, message: dict[str, Any]) -> None:
        processor = self._conflict_emitter()
        if processor is not None and self.session.sends_client_messages:
            await send_client_messages(processor, [message], queue=True)

    def _conflict_emitter(self) -> FrameProcessor | None:
        emitter = getattr(self, "llm", None)  # the speech-to-speech service, when attached
        if isinstance(emitter, FrameProcessor):
            return emitter
        return self.hook.llm if self.hook is not None else None

    def _supervise(self, llm: LLMService) -> None:
        """Attach the monitor and extractor the agent needs (see ``attach_supervision``)."""
        if self.supervise:
            from pipecat_steward.pipecat.supervise import attach_supervision

            attach_supervision(self, llm)

    async def start(self) -> bool:
        """Restore the conversation by identity, before any routing; True when resumed."""
        return await self.session.restore()

    async def _on_event(self, event: SessionEvent) -> None:
        if isinstance(event, AssistantTurnWritten):
            await self.session.save()  # a turn boundary
            return
        text = event.text.strip() if isinstance(event, AssistantTextComplete) else ""
        if text and not self.driver.heard(text):  # engine text is recorded by the driver
            self.session.spoke(text, "llm")

    def _anticipate(self, event: SessionEvent) -> None:
        """Run the engine's step for the caller's words while their turn is ending.

        Called in place as the relay publishes a transcript: it only notes the words and sets
        a timer, which is cheaper than waking a subscriber task on the transcript's way.

        Only where the hook decides (a cascade), for the turn still open: the words are every
        transcript of it so far, joined as the user aggregator joins them. The step runs a
        moment later (``ANTICIPATE_AFTER_S``): the transcript's own way through the pipeline
        goes first, and a turn that has ended, or heard more, by then is not anticipated.
        """
        if not isinstance(event, UserTranscript) or event.source != "cascade":
            return
        if not self._hooks or not event.text.strip():  # no hook decides here
            return
        self._heard = self._joined(event.turn, event.text, event.spaced)
        self._schedule(self._heard)

    def _anticipate_interim(self, interim: UserInterimTranscript) -> None:
        """Run the step for an interim guess at the caller's words, while they still speak.

        The words are the turn's finals so far with the guess for the segment being spoken
        after them; its final transcript replaces the guess. When the final says what the
        guess said, the step made for the guess is the one the inference uses, however soon
        the turn ends after it (``StepAnticipation.make`` keeps it rather than running it
        again); when not, the final's own step replaces it.
        """
        if self._hooks:
            self._schedule(self._joined(interim.turn, interim.text, interim.spaced))

    def _joined(self, turn: int, text: str, spaced: bool) -> _Words:
        """The turn's finals heard so far, then ``text`` (the finals of a newer turn: none)."""
        heard_turn, parts = self._heard
        part = TextPartForConcatenation(text, includes_inter_part_spaces=spaced)
        return (turn, [*parts, part] if heard_turn == turn else [part])

    def _schedule(self, words: _Words) -> None:
        self._latest = words
        try:  # on the transcript's way: no context manager's frames
            loop = asyncio.get_running_loop()
        except RuntimeError:  # published outside a loop: nothing to run on
            return
        loop.call_later(ANTICIPATE_AFTER_S, self._anticipate_now, words)

    def _anticipate_now(self, words: _Words) -> None:
        # Only the latest words, and only while their turn is still to be taken.
        if self._latest is not words or self.session.caller_turns.upcoming() != words[0]:
            return
        action = self.driver.anticipate(concatenate_aggregated_text(words[1]))
        if action is not None and self.hook is not None:
            self.hook.prepare(action)  # its instruction too, while the turn ends


def _install(service: LLMService, hook: StewardHook) -> None:
    """Hook ``hook`` into ``service``: a mixin's slot, else its wrapped ``process_frame``."""
    if isinstance(service, StewardLLMMixin):
        service.steward_hook = hook
    else:
        attach(service, hook)
