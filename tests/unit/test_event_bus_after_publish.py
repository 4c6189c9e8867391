"""``EventBus.after_publish``: a reader told *that* an event was published, where a subscriber wakes."""

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
