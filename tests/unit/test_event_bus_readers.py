"""``EventBus``: readers told that an event was published, and subscribers that name their kinds."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.pipecat.events import (
    BotStartedSpeaking,
    EventBus,
    SessionEvent,
    UserStartedSpeaking,
)


def test_a_callback_runs_once_per_burst_after_the_publisher_yields() -> None:
    async def scenario() -> list[str]:
        bus, seen = EventBus(), []
        bus.subscribe(lambda e: seen.append("subscriber"))
        bus.after_publish(lambda: seen.append("after"))
        for _ in range(3):
            bus.publish(BotStartedSpeaking())
        seen.append("published")  # nothing ran inside publish
        await asyncio.sleep(0)
        await bus.drain()
        await asyncio.sleep(0)
        await bus.aclose()
        return seen

    seen = asyncio.run(scenario())
    assert seen == ["published", "subscriber", "subscriber", "subscriber", "after"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=12))
def test_after_every_burst_a_callback_runs_behind_the_subscribers_it_woke(
    steps: list[tuple[int, int]],
) -> None:
    """Publishes come in bursts (``n`` at once, some kinds for one subscriber only, some
    from inside a subscriber) separated by ``y`` yields. The callback never runs twice without
    a publish in between, and after the last publish it runs behind every delivery."""

    async def scenario() -> list[str]:
        bus, log = EventBus(), []

        def publish(event: SessionEvent) -> None:
            log.append("pub")
            bus.publish(event)

        def every(event: SessionEvent) -> None:
            log.append("every")
            if isinstance(event, BotStartedSpeaking) and event.at_ns == 1:
                publish(UserStartedSpeaking(at_ns=2))  # a subscriber publishes in turn

        bus.subscribe(every)
        bus.subscribe(lambda e: log.append("some"), kinds=(UserStartedSpeaking,))
        bus.after_publish(lambda: log.append("after"))
        for n, yields in steps:
            for i in range(n):
                publish(BotStartedSpeaking(at_ns=1) if i == 0 else UserStartedSpeaking())
            for _ in range(yields):
                await asyncio.sleep(0)
        await bus.drain()
        for _ in range(10):
            await asyncio.sleep(0)
        await bus.aclose()
        return log

    log = asyncio.run(scenario())
    runs = [i for i, x in enumerate(log) if x == "after"]
    if "pub" in log:
        assert runs and runs[-1] == len(log) - 1  # the last run follows every delivery
    for before, after in zip(runs, runs[1:], strict=False):
        assert "pub" in log[before:after]  # no run without a publish since the last one


def test_nothing_is_scheduled_outside_a_loop_or_after_close() -> None:
    bus, calls = EventBus(), []
    bus.after_publish(lambda: calls.append(1))
    bus.publish(BotStartedSpeaking())  # no running loop: nothing to schedule on

    async def closed() -> None:
        await bus.aclose()
        bus.publish(BotStartedSpeaking())
        await asyncio.sleep(0)

    asyncio.run(closed())
    assert calls == []


def test_a_subscriber_with_kinds_receives_only_those_in_order() -> None:
    from pipecat_steward.pipecat.events import BotStoppedSpeaking, UserStartedSpeaking

    async def scenario() -> tuple[list[object], list[object]]:
        bus = EventBus()
        every: list[object] = []
        some: list[object] = []
        bus.subscribe(every.append)
        sub = bus.subscribe(some.append, kinds=(BotStartedSpeaking, UserStartedSpeaking))
        published = [
            BotStartedSpeaking(at_ns=1),
            BotStoppedSpeaking(at_ns=2),
            UserStartedSpeaking(at_ns=3),
            BotStoppedSpeaking(at_ns=4),
            BotStartedSpeaking(at_ns=5),
        ]
        for event in published:
            bus.publish(event)
        await bus.drain()
        assert sub.stats.delivered == 3
        await bus.aclose()
        return every, some

    every, some = asyncio.run(scenario())
    assert [e.at_ns for e in every] == [1, 2, 3, 4, 5]  # type: ignore[attr-defined]
    assert [e.at_ns for e in some] == [1, 3, 5]  # type: ignore[attr-defined]


def test_a_run_left_on_a_closed_loop_does_not_stop_the_next_loop_s_runs() -> None:
    bus, calls = EventBus(), []
    bus.after_publish(lambda: calls.append(1))

    async def publish() -> None:
        bus.publish(BotStartedSpeaking())
        await asyncio.sleep(0)

    async def publish_only() -> None:
        bus.publish(BotStartedSpeaking())

    loop = asyncio.new_event_loop()
    task = loop.create_task(publish_only())
    loop.call_soon(loop.stop)  # the loop stops before the run the publish queued
    loop.run_forever()
    loop.close()
    assert task.done()
    assert calls == []
    asyncio.run(publish())
    assert calls == [1]


def test_a_tap_runs_in_place_for_its_kinds_before_any_subscriber_and_its_error_stays_there() -> (
    None
):
    from pipecat_steward.pipecat.events import BotStoppedSpeaking

    async def scenario() -> list[str]:
        bus, log = EventBus(), []

        def failing(event: SessionEvent) -> None:
            raise RuntimeError("tap bug")

        bus.tap(failing, kinds=(BotStartedSpeaking,))
        bus.tap(lambda e: log.append(f"tap {type(e).__name__}"), kinds=(BotStartedSpeaking,))
        bus.subscribe(lambda e: log.append(f"subscriber {type(e).__name__}"))
        bus.publish(BotStartedSpeaking())
        bus.publish(BotStoppedSpeaking())
        log.append("published")
        await bus.drain()
        await bus.aclose()
        return log

    assert asyncio.run(scenario()) == [
        "tap BotStartedSpeaking",
        "published",
        "subscriber BotStartedSpeaking",
        "subscriber BotStoppedSpeaking",
    ]
