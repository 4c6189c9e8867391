"""Events nobody reads yet are built later, in batches: the same events as built at once."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.events import EventPublisher
from pipecat_steward.events.publisher import UNBUILT_MAX
from pipecat_steward.events.schema import (
    BotUtteranceEvent,
    CallerTranscript,
    SlotChange,
    ToolResultEvent,
)

SECRETS = ("4929-1234-5678", "Ada Lovelace", "77 Elm Street")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Call:
    """One publisher and what the session around it does between two events."""

    def __init__(self, *, read_at_once: bool) -> None:
        self.clock = Clock()
        self.known: set[str] = set()
        self.pub = EventPublisher("s1", clock=self.clock)
        self.pub.redaction = lambda: self._redact_known(frozenset(self.known))
        self.built: list[int] = []
        if read_at_once:
            self.pub.sinks.append(lambda e: self.built.append(e.seq))
        self.values: list[Any] = []

    @staticmethod
    def _redact_known(known: frozenset[str]):  # the secrets of one moment, as a session's
        def redact(text: str) -> str:
            for secret in known:
                text = text.replace(secret, "[redacted]")
            return text

        return redact

    def do(self, op: tuple[Any, ...]) -> None:
        match op:
            case ("emit", kind, secret):
                self._emit(kind, secret)
            case ("tick", seconds):
                self.clock.now += seconds
            case ("turn",):
                self.pub.turn += 1
            case ("learn", secret):
                self.known.add(secret)
            case ("forget",):
                self.known.clear()
            case ("change",) if self.values:  # the session changes a value it gave an event
                self.values[-1]["items"].append("changed")
                self.values[-1]["secret"] = SECRETS[0]
            case ("read",):
                self.pub.texts()
            case _:
                pass

    def _emit(self, kind: int, secret: str) -> None:
        value: dict[str, Any] = {"items": [secret, {"n": 1}], "secret": secret}
        self.values.append(value)
        if kind == 0:
            self.pub.emit(CallerTranscript, text=f"it is {secret}")
        elif kind == 1:
            self.pub.emit(SlotChange, slot="card", status="filled", value=value)
        else:
            self.pub.emit(ToolResultEvent, name="pay", outcome="ok", result=value)


OPS = st.one_of(
    st.tuples(st.just("emit"), st.integers(0, 2), st.sampled_from(SECRETS)),
    st.tuples(st.just("tick"), st.floats(0.001, 5.0)),
    st.tuples(st.just("turn")),
    st.tuples(st.just("learn"), st.sampled_from(SECRETS)),
    st.tuples(st.just("forget")),
    st.tuples(st.just("change")),
    st.tuples(st.just("read")),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(OPS, max_size=3 * UNBUILT_MAX))
def test_an_event_built_later_is_the_event_built_at_once(ops: list[tuple[Any, ...]]) -> None:
    at_once, later = Call(read_at_once=True), Call(read_at_once=False)
    for op in ops:
        at_once.do(op)
        later.do(op)
        assert later.pub.emitted == at_once.pub.emitted
    assert at_once.built == list(range(1, at_once.pub.emitted + 1))  # each as it came
    # Same text: same seq, time, turn and redaction, and nothing changed after the emit.
    assert later.pub.texts() == at_once.pub.texts()


def test_a_watcher_is_told_before_the_event_is_built_and_texts_build_it() -> None:
    pub = EventPublisher("s1")
    told: list[int] = []
    pub.watchers.append(lambda: told.append(pub.emitted))
    pub.emit(CallerTranscript, text="hi")
    pub.emit(CallerTranscript, text="again")
    assert told == [1, 2]
    assert [t.count('"seq"') for t in pub.texts(1)] == [1]
    assert [e.text for e in pub.events] == ["hi", "again"]  # pyright: ignore[reportAttributeAccessIssue]


async def test_a_closed_publisher_has_built_every_event_and_its_end() -> None:
    pub = EventPublisher("s1")
    for n in range(UNBUILT_MAX - 1):
        pub.emit(CallerTranscript, text=f"words {n}")
    await pub.aclose("ended")
    pub.emit(CallerTranscript, text="too late")
    kinds = [e.kind for e in pub.events]
    assert kinds == ["caller_transcript"] * (UNBUILT_MAX - 1) + ["call_ended"]


def test_an_event_that_cannot_be_built_is_logged_and_holds_its_place() -> None:
    pub = EventPublisher("s1")
    pub.emit(CallerTranscript, text="before")
    pub.emit(BotUtteranceEvent, text="hi", source="shouted")  # a bug's event
    pub.emit(CallerTranscript, text="after")
    emitted = pub.emitted
    events = pub.events
    # Every event keeps the position it was emitted at: a reader of ``texts`` by position
    # (the RTVI sender) gets each event it was told of, and ``seq`` has no gap.
    assert len(events) == emitted == 3
    assert [e.kind for e in events] == ["caller_transcript", "debug", "caller_transcript"]
    assert events[1].data == {"kind": "BotUtteranceEvent"}  # pyright: ignore[reportAttributeAccessIssue]
    assert [e.seq for e in events] == [1, 2, 3]
