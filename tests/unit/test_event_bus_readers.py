"""``EventBus``: readers told that an event was published, and subscribers that name their kinds."""

from __future__ import annotations

import asyncio

from pipecat_steward.pipecat.events import BotStartedSpeaking, EventBus


def test_a_callback_runs_once_per_publish_after_the_publisher_yields() -> None:
    async def scenario() -> list[str]:
        bus, seen = EventBus(), []
        bus.subscribe(lambda e: seen.append("subscriber"))
        bus.after_publish(lambda: seen.append("after"))
        for _ in range(3):
            bus.publish(BotStartedSpeaking())
        seen.append("published")  # nothing ran inside publish
        await asyncio.sleep(0)
        await bus.drain()
        await bus.aclose()
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == "published"
    assert seen.count("after") == 3 and seen.count("subscriber") == 3


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
