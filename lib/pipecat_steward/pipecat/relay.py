"""`StewardRelay`: an observer that turns pipecat frames into session events.

An observer sees every frame wherever it travels, without joining the pipeline, so the
relay works for cascaded and speech-to-speech pipelines alike (the aggregators swallow
transcripts and text before most processors could see them). Pipecat reports a frame at
every hop; the relay asks for first pushes only and also drops the second copy of a
broadcast frame (pipecat pushes two frame objects, linked by `broadcast_sibling_id`), so
each event is published once.

Pipecat gives every observer a queue and a task of its own and hands it every frame event
(every push and every processing, ~250 per caller turn), which costs the call as much CPU as
a tenth of plain pipecat's, though the relay uses a few frames a turn. `StewardRelay.ride`
lets the relay see pushes where they happen instead: once the pipeline sets up the service it
was given, the relay leaves the worker's observer queue and reads each push on its way to the
worker's observer (a dict lookup for the frames it ignores). Its events are the same, in the
same order; a pipeline the relay rides no service of (speech-to-speech) keeps the queue.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Coroutine
from typing import Any

from loguru import logger
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EagerTranscriptionFrame,
    Frame,
    FunctionCallInProgressFrame,
    FunctionCallResultFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMContextAssistantTurnFrame,
    LLMFullResponseEndFrame,
    LLMTextFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
)
from pipecat.observers.base_observer import (
    BaseObserver,
    FramePushed,
    ProcessorSetUp,
)
from pipecat.pipeline.worker_observer import WorkerObserver
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor, FrameProcessorSetup

from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    AssistantTurnWritten,
    BotStartedSpeaking,
    BotStoppedSpeaking,
    EventBus,
    FunctionCallResult,
    FunctionCallStarted,
    Interruption,
    SessionEvent,
    UserInterimTranscript,
    UserStartedSpeaking,
    UserTranscript,
)
from pipecat_steward.runtime.caller_turns import CallerTurns

_UNRESOLVED: Any = object()  # a frame type the relay has not looked up yet
_RECENT_IDS = 4096  # frame ids remembered for de-duplication; far more than frames in flight


class _RecentIds:
    """A bounded set of frame ids (oldest forgotten first)."""

    def __init__(self, size: int = _RECENT_IDS) -> None:
        self.ids: OrderedDict[int, None] = OrderedDict()
        """The ids recorded, oldest first (read only: a membership test is a repeat sighting)."""
        self._size = size

    def seen(self, frame: Frame) -> bool:
        """Record `frame` (and its broadcast sibling); True if it was already recorded."""
        if frame.id in self.ids:
            return True
        self._add(frame.id)
        if frame.broadcast_sibling_id is not None:
            self._add(frame.broadcast_sibling_id)
        return False

    def _add(self, frame_id: int) -> None:
        self.ids[frame_id] = None
        if len(self.ids) > self._size:
            self.ids.popitem(last=False)


class StewardRelay(BaseObserver):
    """Publish one `SessionEvent` per meaningful frame onto an `EventBus`.

    Add it with `PipelineWorker(..., observers=[relay])`; subscribe with
    `relay.bus.subscribe(fn)`.
    """

    def __init__(
        self, bus: EventBus | None = None, *, turns: CallerTurns | None = None, **kwargs
    ) -> None:
        """Create the relay.

        Args:
            bus: The bus to publish on. When omitted the relay makes one and closes it
                when the pipeline is cleaned up.
            turns: The session's caller-turn counter; each final transcript is stamped with
                the turn it belongs to. Without one, transcripts carry turn 0.
            **kwargs: Passed to `BaseObserver`.

        """
        super().__init__(observe_every_push=False, **kwargs)
        self.turns = turns
        self._owns_bus = bus is None
        self.bus = bus if bus is not None else EventBus()
        self._recent = _RecentIds()
        self._text: list[str] = []
        self._interim_readers: list[Callable[[UserInterimTranscript], None]] = []
        self._handlers: dict[type[Frame], Callable[[FramePushed], SessionEvent | None]] = {
            TranscriptionFrame: self._on_transcription,
            InterimTranscriptionFrame: self._on_interim,
            EagerTranscriptionFrame: self._on_interim,
            LLMTextFrame: self._on_llm_text,
            LLMFullResponseEndFrame: self._on_llm_end,
            LLMContextAssistantTurnFrame: self._on_turn_written,
            BotStartedSpeakingFrame: lambda d: BotStartedSpeaking(at_ns=d.timestamp),
            BotStoppedSpeakingFrame: lambda d: BotStoppedSpeaking(at_ns=d.timestamp),
            UserStartedSpeakingFrame: lambda d: UserStartedSpeaking(at_ns=d.timestamp),
            InterruptionFrame: self._on_interruption,
            FunctionCallInProgressFrame: self._on_call_started,
            FunctionCallResultFrame: self._on_call_result,
        }
        # Every frame type seen so far -> its handler, or None for the many types the relay
        # ignores: a frame the relay has no use for costs one dict lookup.
        self.by_type: dict[type[Frame], Callable[[FramePushed], SessionEvent | None] | None] = {}
        self.inline = False  # True while the relay reads pushes in place (see `ride`)

    async def on_push_frame(self, data: FramePushed) -> None:
        self.see(data)

    def see(self, data: FramePushed) -> None:
        """Publish the event ``data``'s frame means, if any (first sighting only)."""
        frame = data.frame
        # A type seen before costs one dict lookup (read in place, ignored ones never get here).
        kind = type(frame)
        handler = self.by_type.get(kind, _UNRESOLVED)
        if handler is _UNRESOLVED:
            handler = self.by_type[kind] = self._resolve(kind)
        if handler is None or self._recent.seen(frame):
            return
        event = handler(data)
        if event is not None:
            self.bus.publish(event)

    async def cleanup(self) -> None:
        await super().cleanup()
        if self._owns_bus and not self.inline:
            await self.bus.aclose()

    def ride(self, processor: FrameProcessor) -> None:
        """Read pushes in place once ``processor``'s pipeline sets it up (see module docstring).

        Only where the relay is one of that pipeline's observers; it then closes its bus when
        ``processor`` is cleaned up, as it would when the worker cleans up its observers.
        """
        setup, cleanup = processor.setup, processor.cleanup

        async def setup_then_ride(config: FrameProcessorSetup) -> None:
            await setup(config)
            await self._go_inline(config)

        async def cleanup_then_close() -> None:
            await cleanup()
            if self.inline:
                self.inline = False
                if self._owns_bus:
                    await self.bus.aclose()

        processor.setup = setup_then_ride  # type: ignore[method-assign]
        processor.cleanup = cleanup_then_close  # type: ignore[method-assign]

    async def _go_inline(self, config: FrameProcessorSetup) -> None:
        worker = config.observer
        if self.inline or not isinstance(worker, WorkerObserver):
            return
        if self not in worker._observers:  # pyright: ignore[reportPrivateUsage]
            return  # not this pipeline's observer: nothing to take over
        self.inline = True
        # Every processor of the pipeline reads this one setup's observer on each push.
        config.observer = _ReadInPlace(worker, self)
        await worker.remove_observer(self)

    def _resolve(self, kind: type[Frame]) -> Callable[[FramePushed], SessionEvent | None] | None:
        # Exact type first (the common case), then subclasses (e.g. a service's own frames).
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler
        for cls, candidate in self._handlers.items():
            if issubclass(kind, cls):
                return candidate
        return None

    def _on_transcription(self, data: FramePushed) -> SessionEvent:
        frame = data.frame
        assert isinstance(frame, TranscriptionFrame)
        # STT pushes finals downstream; speech-to-speech services push them upstream.
        upstream = data.direction == FrameDirection.UPSTREAM
        return UserTranscript(
            text=frame.text,
            user_id=frame.user_id,
            source="s2s" if upstream else "cascade",
            at_ns=data.timestamp,
            turn=self._turn_of(frame.text),
            spaced=frame.includes_inter_frame_spaces,
        )

    def on_interim(self, reader: Callable[[UserInterimTranscript], None]) -> None:
        """Call ``reader`` in place with each interim transcript of a cascade.

        An eager transcript (a service's provisional end of turn, which the committed
        transcript may still change) is a guess too, and reaches the readers the same way.

        Interims are guesses, never session events (see ``UserInterimTranscript``); a reader
        runs on the frame path, like a bus tap: keep it to a few microseconds. An exception it
        raises is logged, never propagated.
        """
        self._interim_readers.append(reader)

    def _on_interim(self, data: FramePushed) -> None:
        frame = data.frame
        assert isinstance(frame, InterimTranscriptionFrame | EagerTranscriptionFrame)
        if data.direction != FrameDirection.DOWNSTREAM or not frame.text.strip():
            return None
        turn = self.turns.upcoming() if self.turns is not None else 0
        interim = UserInterimTranscript(
            text=frame.text, turn=turn, spaced=frame.includes_inter_frame_spaces
        )
        for reader in self._interim_readers:
            try:
                reader(interim)
            except Exception:
                logger.exception(f"steward relay: interim reader {reader!r} failed")
        return None

    def _turn_of(self, text: str) -> int:
        """The caller turn a transcript belongs to; blank words open none."""
        if self.turns is None:
            return 0
        return self.turns.heard() if text.strip() else self.turns.current

    def _on_llm_text(self, data: FramePushed) -> None:
        assert isinstance(data.frame, LLMTextFrame)
        self._text.append(data.frame.text)

    def _on_llm_end(self, data: FramePushed) -> SessionEvent | None:
        text, self._text = "".join(self._text), []
        # A response that only called tools carries no text to report.
        return AssistantTextComplete(text=text, at_ns=data.timestamp) if text else None

    def _on_turn_written(self, data: FramePushed) -> SessionEvent:
        assert isinstance(data.frame, LLMContextAssistantTurnFrame)
        return AssistantTurnWritten(text=data.frame.text, at_ns=data.timestamp)

    def _on_interruption(self, data: FramePushed) -> SessionEvent:
        # Text generated before the barge-in belongs to no completed response.
        self._text = []
        return Interruption(at_ns=data.timestamp)

    def _on_call_started(self, data: FramePushed) -> SessionEvent:
        frame = data.frame
        assert isinstance(frame, FunctionCallInProgressFrame)
        return FunctionCallStarted(
            name=frame.function_name,
            args=dict(frame.arguments),
            tool_call_id=frame.tool_call_id,
            at_ns=data.timestamp,
        )

    def _on_call_result(self, data: FramePushed) -> SessionEvent:
        frame = data.frame
        assert isinstance(frame, FunctionCallResultFrame)
        return FunctionCallResult(
            name=frame.function_name,
            tool_call_id=frame.tool_call_id,
            result=frame.result,
            error=frame.error,
            at_ns=data.timestamp,
        )


class _ReadInPlace(BaseObserver):
    """The worker's observer with the relay reading each push in place (see `ride`)."""

    def __init__(self, worker: WorkerObserver, relay: StewardRelay) -> None:
        super().__init__()
        self.worker = worker
        self.relay = relay
        self.by_type = relay.by_type
        self.recent = relay._recent.ids
        self.on_process_frame = worker.on_process_frame  # type: ignore[method-assign]  # hot

    def on_push_frame(self, data: FramePushed) -> Coroutine[Any, Any, None]:  # pyright: ignore[reportIncompatibleMethodOverride]
        # Not a coroutine of its own: the processor awaits the worker's, one frame less per
        # push. The relay's own de-duplication (frame ids and broadcast siblings) stands in
        # for the worker's first-push mark, so a frame is read on its first push only. Most
        # pushes are of types the relay ignores, or of a frame it read at an earlier hop (a
        # system or broadcast frame is pushed by every processor it passes): those cost a
        # dict lookup or two and no call.
        frame = data.frame
        if self.by_type.get(type(frame), _UNRESOLVED) is None or frame.id in self.recent:
            return self.worker.on_push_frame(data)
        try:
            self.relay.see(data)
        except Exception:  # a relay bug must not break the frame path
            logger.exception(f"steward relay failed on {type(data.frame).__name__}")
        return self.worker.on_push_frame(data)

    async def on_processor_setup(self, data: ProcessorSetUp) -> None:
        await self.worker.on_processor_setup(data)

    async def on_pipeline_started(self) -> None:
        await self.worker.on_pipeline_started()
