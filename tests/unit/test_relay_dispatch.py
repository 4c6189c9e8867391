"""Which frames the relay turns into events: by exact type, by subclass, and none for the rest.

The relay remembers its answer per frame type, so these run every frame twice (the second
push of each type is served from memory) and in both orders of subclass and base.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import pytest
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    EagerTranscriptionFrame,
    Frame,
    InterimTranscriptionFrame,
    LLMTextFrame,
    TextFrame,
    TranscriptionFrame,
    TTSTextFrame,
)
from pipecat.observers.base_observer import FramePushed
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from pipecat_steward.pipecat.events import EventBus, SessionEvent, UserInterimTranscript
from pipecat_steward.pipecat.relay import StewardRelay
from pipecat_steward.runtime.caller_turns import CallerTurns


class ServiceTranscription(TranscriptionFrame):
    """A service's own final-transcript frame: reported like its base."""


class ServiceSpeaking(BotStartedSpeakingFrame):
    """A service's own speaking frame: reported like its base."""


FRAMES: dict[str, tuple[Callable[[], Frame], str | None]] = {
    "transcript": (lambda: TranscriptionFrame("four", "u", "t"), "UserTranscript"),
    "service transcript": (lambda: ServiceTranscription("four", "u", "t"), "UserTranscript"),
    "speaking": (BotStartedSpeakingFrame, "BotStartedSpeaking"),
    "service speaking": (ServiceSpeaking, "BotStartedSpeaking"),
    "interim transcript": (lambda: InterimTranscriptionFrame("fo", "u", "t"), None),
    "eager transcript": (lambda: EagerTranscriptionFrame("four", "u", "t"), None),
    "plain text": (lambda: TextFrame(text="hi"), None),
    "tts text": (lambda: TTSTextFrame(text="hi", text_type="word"), None),
    "llm text": (lambda: LLMTextFrame(text="hi"), None),  # held until the response ends
}


def fresh(name: str) -> Frame:
    return FRAMES[name][0]()


async def published(relay: StewardRelay, frames: list[Frame]) -> list[SessionEvent]:
    seen: list[SessionEvent] = []
    relay.bus.subscribe(seen.append)
    source = FrameProcessor()
    for frame in frames:
        await relay.on_push_frame(
            FramePushed(source, source, frame, FrameDirection.DOWNSTREAM, timestamp=1)
        )
    await relay.bus.drain()
    return seen


@pytest.mark.parametrize(
    "order", list(itertools.permutations(["transcript", "service transcript", "plain text"]))
)
async def test_subclass_and_base_map_to_one_event_kind_in_any_order(order: tuple[str, ...]):
    relay = StewardRelay(EventBus())
    frames = [fresh(name) for name in order for _ in range(2)]
    events = await published(relay, frames)
    assert [type(e).__name__ for e in events] == ["UserTranscript"] * 4


@pytest.mark.parametrize("name", list(FRAMES))
async def test_each_frame_kind_twice_gives_its_event_twice_or_none(name: str):
    relay = StewardRelay(EventBus())
    events = await published(relay, [fresh(name), fresh(name)])
    expected = FRAMES[name][1]
    assert [type(e).__name__ for e in events] == ([expected] * 2 if expected else [])


async def test_a_frame_pushed_again_is_reported_once():
    relay = StewardRelay(EventBus())
    frame = fresh("transcript")
    events = await published(relay, [frame, frame, fresh("plain text"), frame])
    assert [type(e).__name__ for e in events] == ["UserTranscript"]
    await asyncio.sleep(0)


async def test_an_interim_reaches_its_readers_in_place_and_never_the_bus() -> None:
    """A guess is no caller turn: readers get it stamped with the turn it would join, the bus
    (so every subscriber, trace and ledger) gets nothing, and a failing reader breaks nothing."""
    turns = CallerTurns()
    relay = StewardRelay(turns=turns)
    guesses: list[UserInterimTranscript] = []

    def failing(_: UserInterimTranscript) -> None:
        raise RuntimeError("a reader's bug")

    relay.on_interim(failing)
    relay.on_interim(guesses.append)
    source = FrameProcessor()
    seen: list[SessionEvent] = []
    relay.bus.subscribe(seen.append)
    pushes = [
        (InterimTranscriptionFrame("four", "u", "t"), FrameDirection.DOWNSTREAM),
        (
            InterimTranscriptionFrame("from a speech-to-speech service", "", "t"),
            FrameDirection.UPSTREAM,
        ),
        (InterimTranscriptionFrame("  ", "u", "t"), FrameDirection.DOWNSTREAM),
        (TranscriptionFrame("four people", "u", "t"), FrameDirection.DOWNSTREAM),
        (InterimTranscriptionFrame("on Friday", "u", "t"), FrameDirection.DOWNSTREAM),
        (EagerTranscriptionFrame("on Friday please", "u", "t"), FrameDirection.DOWNSTREAM),
    ]
    for frame, direction in pushes:
        relay.see(FramePushed(source, source, frame, direction, timestamp=1))
    turns.taken()
    relay.see(
        FramePushed(
            source,
            source,
            InterimTranscriptionFrame("yes", "u", "t"),
            FrameDirection.DOWNSTREAM,
            timestamp=1,
        )
    )
    await relay.bus.drain()
    assert [(g.text, g.turn) for g in guesses] == [
        ("four", 1),
        ("on Friday", 1),
        ("on Friday please", 1),
        ("yes", 2),
    ]
    assert [type(e).__name__ for e in seen] == ["UserTranscript"]
    await relay.bus.aclose()
