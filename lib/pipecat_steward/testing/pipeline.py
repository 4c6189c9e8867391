"""Run a real pipecat pipeline in text mode: transcripts in, spoken text out.

`TextPipeline` builds `user_agg → llm → TextTTS → PlaybackTransport → assistant_agg` around
any LLM service. Caller turns enter as final `TranscriptionFrame`s (as an STT would push
them); the bot's text is captured by `TextTTS` where a TTS would speak it, one entry per
sentence. `PlaybackTransport` is a real output transport, so bot started/stopped speaking
and barge-in behave as in a call; with `secs_per_word > 0` audio plays in real time, which
barge-in tests need.

On a cascaded pipeline `settle` waits for explicit completion, never for quiet time, so a
scenario's trace does not depend on how loaded the machine is: every caller transcript said is
in a turn handed to the LLM, every LLM response has ended, no function call is in progress, the
bot is not speaking, and a marker frame sent through the whole pipeline came out the far end
with no other work moving while it travelled (every frame queued before it, in every stage, has
been handled). A speech-to-speech service answers over its own connection, outside the
pipeline's queues, so nothing in the pipeline tells when its answer has all arrived: give the
pipeline the provider fake's `ProviderSync` (`settler(llm)` of `RealtimeServer`,
`GeminiLiveServer` or `NovaSonicFake`) and `settle` also waits until the fake and the service
have each handled everything the other sent, with no response running and none of the
service's own pending work (Gemini's held transcript) left, and nothing new between two such
syncs. Without one (a service on something other than these fakes), a speech-to-speech
`settle` falls back to waiting for a short time with no frame moving.

The bounds on the start, a `settle` and the stop are `WaitBudget`s, counted in the waiter's own
polls rather than by the clock: with hundreds of calls in one process, or on a busy CI machine,
a call runs slower but ends the same, and a start that fails leaves no pipeline running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import (
    BotSpeakingFrame,
    DataFrame,
    EndFrame,
    Frame,
    FunctionCallCancelFrame,
    FunctionCallInProgressFrame,
    FunctionCallResultFrame,
    InterimTranscriptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    MetricsFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    StartFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import TransportParams
from pipecat.turns.user_start import TranscriptionUserTurnStartStrategy
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

from pipecat_steward.runtime.options import Check, check_options, is_seconds
from pipecat_steward.testing.lifecycle import Lifecycle
from pipecat_steward.testing.waiting import WaitBudget

SAMPLE_RATE = 24_000
_CHUNK_SECS = 0.02  # one audio frame; short enough that a barge-in lands between sentences
_NOISE = (BotSpeakingFrame, TTSAudioRawFrame, OutputAudioRawFrame, MetricsFrame)


_TIMES = {
    name: Check(lambda v: is_seconds(v, zero=True), "a number of seconds, 0 or more", none=False)
    for name in ("turn_end_s", "secs_per_word")
}
"""The pipeline's times: a negative turn end or speech pace would end turns before they start."""

ProviderSync = Callable[[], Awaitable[int]]
"""Returns once a speech-to-speech provider's fake has handled every message its service sent
before the call and finished every response it started, and the service has handled every
message the fake sent before answering; the number of client messages the fake has handled, or
a negative number, new at each call, when it also waited out work of the service's own."""


class TextTTS(TTSService):
    """A real `TTSService` that records what it is asked to speak and yields silence.

    Attributes:
        spoken: Every text segment the TTS received, in order (one per sentence).

    """

    def __init__(self, *, secs_per_word: float = 0.0, **kwargs: Any) -> None:
        """Create the TTS.

        Args:
            secs_per_word: Audio length per word; 0 gives one short frame per segment.
            **kwargs: Passed to `TTSService`.

        """
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            stop_frame_timeout_s=0.2,
            sample_rate=SAMPLE_RATE,
            settings=TTSSettings(model=None, voice=None, language=None),
            **kwargs,
        )
        self._secs_per_word = secs_per_word
        self.spoken: list[str] = []

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        self.spoken.append(text.strip())
        chunks = max(1, round(self._secs_per_word * len(text.split()) / _CHUNK_SECS))
        silence = b"\x00\x00" * int(SAMPLE_RATE * _CHUNK_SECS)
        for _ in range(chunks):
            yield TTSAudioRawFrame(silence, SAMPLE_RATE, 1, context_id=context_id)


class PlaybackTransport(BaseOutputTransport):
    """A real output transport that plays audio nowhere, optionally in real time.

    Attributes:
        messages: Every transport message it sent (an RTVI client's messages, for one), in order.
    """

    def __init__(self, *, realtime: bool = False, **kwargs: Any) -> None:
        """Create the transport.

        Args:
            realtime: Sleep each audio frame's duration, so playout takes as long as speech.
            **kwargs: Passed to `BaseOutputTransport`.

        """
        params = TransportParams(audio_out_enabled=True, audio_out_sample_rate=SAMPLE_RATE)
        super().__init__(params, **kwargs)
        self._realtime = realtime
        self.ready = False
        self.messages: list[Any] = []

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        self.ready = True

    async def send_message(
        self, frame: OutputTransportMessageFrame | OutputTransportMessageUrgentFrame
    ) -> None:
        self.messages.append(frame.message)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        if self._realtime:
            await asyncio.sleep(len(frame.audio) / 2 / frame.sample_rate / frame.num_channels)
        return True


@dataclass
class SettleProbe(DataFrame):
    """A marker frame: when it leaves the pipeline, every frame queued before it was handled.

    Data frames keep their order through every stage's queue (the output transport's included,
    behind the audio it plays), and it is not dropped by an interruption.
    """

    interruptible: bool = field(default=False, init=False)


class ActivityObserver(BaseObserver):
    """Counts the pipeline's work: caller turns, LLM responses, calls in flight, other moves.

    Attributes:
        last_push: `time.monotonic()` of the latest non-audio push.
        spoken: Text of every `TTSTextFrame` (what a speech-to-speech service spoke).
        moves: Pushes of anything but audio, metrics and settle probes.
        user_turns: Caller turns the user aggregator handed on (`LLMContextFrame` downstream).
        turn_open: A caller transcript arrived that no handed-on turn includes yet (the
            aggregator may merge several transcripts into one turn).
        responses: LLM responses started and ended.
        calls: Function calls in progress, by tool call id.
        probes: Settle probes that came out of the last stage.

    """

    def __init__(self, user_agg: object = None, last: object = None) -> None:
        super().__init__()
        self.user_agg = user_agg
        self.last = last
        self.last_push = time.monotonic()
        self.spoken: list[str] = []
        self.moves = 0
        self.user_turns = 0
        self.turn_open = False
        self.started = 0
        self.ended = 0
        self.calls: set[str] = set()
        self.probes = 0

    async def on_push_frame(self, data: FramePushed) -> None:
        frame = data.frame
        if isinstance(frame, SettleProbe):
            self.probes += data.source is self.last
            return
        if isinstance(frame, _NOISE):
            return
        self.last_push = time.monotonic()
        self.moves += 1
        if data.first_push:
            self._count(data, frame)

    def _count(self, data: FramePushed, frame: Frame) -> None:
        if isinstance(frame, TTSTextFrame):
            self.spoken.append(frame.text)
        elif isinstance(frame, TranscriptionFrame) and frame.text.strip():
            self.turn_open = True
        elif isinstance(frame, LLMContextFrame) and data.source is self.user_agg:
            self.user_turns += 1
            self.turn_open = False
        elif isinstance(frame, LLMFullResponseStartFrame):
            self.started += 1
        elif isinstance(frame, LLMFullResponseEndFrame):
            self.ended += 1
        elif isinstance(frame, FunctionCallInProgressFrame):
            self.calls.add(frame.tool_call_id)
        elif isinstance(frame, FunctionCallResultFrame | FunctionCallCancelFrame):
            self.calls.discard(frame.tool_call_id)


def transcript_turn_strategies(stop_secs: float = 0.05) -> UserTurnStrategies:
    """Turn strategies for text mode: a transcript opens the turn, a short silence ends it."""
    return UserTurnStrategies(
        start=[TranscriptionUserTurnStartStrategy()],
        stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=stop_secs)],
    )


class TextPipeline(Lifecycle):
    """`user_agg → [before_llm…] → llm → [after_llm…] → TextTTS → output → assistant_agg`.

    Use as an async context manager; `say` a caller turn, `settle` until the bot is done,
    then read `spoken` (bot sentences) and `context`. With `speech_to_speech=True` there is
    no TTS stage (the LLM service produces the audio) and `spoken` is what it transcribed.
    """

    def __init__(
        self,
        llm: FrameProcessor,
        *,
        context: LLMContext | None = None,
        observers: Sequence[BaseObserver] = (),
        before_llm: Sequence[FrameProcessor] = (),
        after_llm: Sequence[FrameProcessor] = (),
        secs_per_word: float = 0.0,
        user_id: str = "caller",
        speech_to_speech: bool = False,
        turn_end_s: float = 0.05,
        provider_sync: ProviderSync | None = None,
        rtvi: bool = False,
    ) -> None:
        """Build the pipeline (it starts on `__aenter__`).

        Args:
            llm: The LLM service (e.g. `ScriptedLLM`, or a real service on a local fake).
            context: The shared context; a new empty one when omitted.
            observers: Extra observers (e.g. a `StewardRelay`).
            before_llm: Processors between the user aggregator and the LLM.
            after_llm: Processors between the LLM and the TTS.
            secs_per_word: Speech duration per word; > 0 plays audio in real time.
            user_id: The `user_id` of the caller's transcripts.
            speech_to_speech: Leave out the TTS: `llm` is an S2S service.
            turn_end_s: The silence after a transcript that ends the caller's turn (0: the
                transcript ends it at once).
            provider_sync: How `settle` syncs with a speech-to-speech provider's fake (see the
                module docs).
            rtvi: Add pipecat's RTVI processor and observer, as a `PipelineWorker` does unless
                told not to: RTVI server message frames reach the output transport as messages
                for the client (`PlaybackTransport.messages`).

        """
        check_options({"turn_end_s": turn_end_s, "secs_per_word": secs_per_word}, _TIMES)
        self.llm = llm
        self.provider_sync = provider_sync
        self.context = context if context is not None else LLMContext()
        self.user_id = user_id
        params = LLMUserAggregatorParams(user_turn_strategies=transcript_turn_strategies(turn_end_s))
        self.user_agg, self.assistant_agg = LLMContextAggregatorPair(
            self.context, user_params=params
        )
        self.tts = None if speech_to_speech else TextTTS(secs_per_word=secs_per_word)
        self.output = PlaybackTransport(realtime=secs_per_word > 0)
        self.activity = ActivityObserver(self.user_agg, self.assistant_agg)
        speech = [] if self.tts is None else [self.tts]
        stages = [self.user_agg, *before_llm, llm, *after_llm, *speech, self.output]
        self.worker = PipelineWorker(
            Pipeline([*stages, self.assistant_agg]),
            params=PipelineParams(),
            observers=[self.activity, *observers],
            cancel_on_idle_timeout=False,
            enable_rtvi=rtvi,
        )
        self._run: asyncio.Task[None] | None = None

    @property
    def spoken(self) -> list[str]:
        """Every sentence the bot spoke (sent to the TTS, or transcribed by the S2S service)."""
        return self.activity.spoken if self.tts is None else self.tts.spoken

    async def start(self, timeout: float = 5.0) -> None:
        """Run the pipeline; return once its output transport is up.

        Args:
            timeout: The bound on the start, as a `WaitBudget`; a start that fails (or is
                cancelled) cancels the pipeline, so none is left running.
        """
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(self.worker)
        self._run = asyncio.create_task(runner.run())
        try:
            await self.wait_started(timeout)
        except BaseException:
            await self._cancel()
            raise

    async def wait_started(self, timeout: float = 5.0) -> None:
        """Wait until the output transport is up (the `StartFrame` went all the way).

        Args:
            timeout: The bound, as a `WaitBudget` (a loaded machine stretches it).
        """
        budget = WaitBudget(timeout, "the pipeline's start")
        await budget.until(lambda: self.worker.has_finished() or self.output.ready, 0.01)

    async def stop(self, timeout: float = 5.0) -> None:
        """End the pipeline gracefully (cancel it if it does not end within `timeout`).

        Args:
            timeout: The bound, as a `WaitBudget` (a loaded machine stretches it).
        """
        if self._run is None:
            return
        await self.worker.queue_frame(EndFrame())
        try:
            await WaitBudget(timeout, "the pipeline's end").first(self._run, interval=0.01)
        except TimeoutError:
            await self._cancel()
            return
        await self._run
        self._run = None

    async def _cancel(self) -> None:
        """Cancel the pipeline and wait until its run has ended."""
        run, self._run = self._run, None
        if run is not None:
            await self.worker.cancel()
            await asyncio.gather(run, return_exceptions=True)

    async def say(self, text: str) -> None:
        """Say `text` as the caller: a final transcript enters the pipeline.

        Several calls before `settle` are several transcripts, as an STT service sends them;
        none is lost, and the turn strategy decides whether they make one caller turn.
        """
        if not isinstance(text, str):
            raise TypeError(f"the caller says text, not {text!r}")
        frame = TranscriptionFrame(text=text, user_id=self.user_id, timestamp=_iso_now())
        # Here the transcript itself opens the caller's turn, and the aggregator's turn-start
        # interruption flushes its queue: a second transcript already queued would be lost. In
        # a call, voice activity opens the turn before any transcript arrives, so a turn's
        # transcripts always come after its interruption; keeping them through interruptions
        # gives the same result.
        frame.interruptible = False
        if text.strip():  # open the turn now: the frame reaches the observer a little later
            self.activity.turn_open = True
        await self.worker.queue_frame(frame)

    async def guess(self, text: str) -> None:
        """An interim transcript enters: the STT service's guess at words still being spoken.

        As in a call, pipecat's transcription turn start reads it as the caller starting to
        speak; the user aggregator never joins it into the turn: only ``say`` gives the turn
        its words (the final transcript that replaces the guess).
        """
        frame = InterimTranscriptionFrame(text=text, user_id=self.user_id, timestamp=_iso_now())
        frame.interruptible = False  # the turn start it causes flushes queues (see ``say``)
        await self.worker.queue_frame(frame)

    async def settle(self, quiet: float | None = None, timeout: float = 30.0) -> None:
        """Wait until the bot is done with everything said so far (see the module docs).

        Args:
            quiet: Extra seconds with no frame moving after completion: the fallback for a
                speech-to-speech pipeline without a `provider_sync` (default 0.3 s there, 0
                elsewhere).
            timeout: Give up (``TimeoutError``) once this is spent, as a `WaitBudget`: a
                bound, not a clock the result depends on (a loaded machine stretches it).
        """
        if quiet is None:
            quiet = 0.3 if self.tts is None and self.provider_sync is None else 0.0
        budget = WaitBudget(timeout, "the pipeline's settling")
        await asyncio.sleep(quiet)  # a provider's answer may not have started moving yet
        while not await self._round(budget):
            pass
        while quiet and time.monotonic() - self.activity.last_push < quiet:
            await budget.poll(0.02)

    async def _round(self, budget: WaitBudget) -> bool:
        """One pass over the pipeline (and the provider); whether nothing moved during it."""
        await self._idle(budget)
        moves = self.activity.moves
        before = await self._sync(budget)
        await self._probe(budget)
        after = await self._sync(budget)
        finished = self.worker.has_finished()
        return finished or (self.activity.moves == moves and before == after and self._done())

    async def _sync(self, budget: WaitBudget) -> int:
        """Sync with the provider (0 without one, or once the pipeline has ended)."""
        if self.provider_sync is None or self._run is None:
            return 0
        sync = asyncio.ensure_future(self.provider_sync())
        try:
            await budget.first(sync, self._run)
        finally:
            if not sync.done():  # the pipeline ended, or the budget ran out
                sync.cancel()
        # A pipeline that ended first: its service answers nothing more.
        return sync.result() if sync.done() else 0

    def _done(self) -> bool:
        a = self.activity
        if a.calls or self.bot_speaking:
            return False
        # A speech-to-speech service frames its responses as its provider streams them (not
        # one start per end), so only a cascaded pipeline can count them.
        return self.tts is None or (not a.turn_open and a.ended >= a.started)

    async def _idle(self, budget: WaitBudget) -> None:
        await budget.until(lambda: self._done() or self.worker.has_finished())

    async def _probe(self, budget: WaitBudget) -> None:
        """Send a `SettleProbe` through the whole pipeline and wait until it comes out."""
        target = self.activity.probes + 1
        await self.worker.queue_frame(SettleProbe())
        await budget.until(lambda: self.activity.probes >= target or self.worker.has_finished())

    @property
    def bot_speaking(self) -> bool:
        """Whether the output transport is playing bot audio."""
        return bool(getattr(self.assistant_agg, "_bot_speaking", False))


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
