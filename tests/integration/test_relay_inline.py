"""A relay riding its service reads pushes in place: same events, in the same order, no queue.

Every case runs the same turns twice through a real pipeline, with the relay as a plain
observer (pipecat's queue and task) and riding the LLM service, and compares the events
field by field (timestamps aside).
"""

from __future__ import annotations

from tests.pipecat_support import EventLog, Recorder, tool, tools

# isort: split

from dataclasses import asdict
from typing import Any

import pytest
from pipecat.processors.aggregators.llm_context import LLMContext

from pipecat_steward.pipecat.relay import StewardRelay
from pipecat_steward.testing import Call, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.script import Step

CASES: dict[str, tuple[list[Step], list[str]]] = {
    "a tool call then words": (
        [Call("set_party_size", {"size": 4}), Say("Four guests. What time?")],
        ["a table for four"],
    ),
    "words only, two turns": (
        [Say("Hello there. How many guests?"), Say("Noted. What time?")],
        ["hi", "four of us"],
    ),
    "two tool calls in one turn": (
        [
            [Call("set_party_size", {"size": 2}), Call("set_party_size", {"size": 3})],
            Say("Three then."),
        ],
        ["two, no three"],
    ),
}


def _shape(events: EventLog) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for event in events.events:
        row = {k: v for k, v in asdict(event).items() if k not in ("at_ns", "tool_call_id")}
        rows.append({"kind": type(event).__name__, **row})
    return rows


async def _run(steps: list[Step], said: list[str], *, ride: bool) -> tuple[list[Any], StewardRelay]:
    llm = ScriptedLLM(list(steps))
    llm.register_function("set_party_size", Recorder({"stored": True}))
    context = LLMContext(tools=tools(tool("set_party_size", size="integer")))
    relay = StewardRelay()
    if ride:
        relay.ride(llm)
    log = EventLog(relay)
    async with TextPipeline(llm, context=context, observers=[relay], user_id="u1") as pipeline:
        proxied = relay in pipeline.worker._observer._observers  # pyright: ignore[reportPrivateUsage]
        assert relay.inline == ride and proxied != ride
        for text in said:
            await pipeline.say(text)
            await pipeline.settle()
        await relay.bus.drain()
    return _shape(log), relay


@pytest.mark.parametrize("case", list(CASES))
async def test_riding_gives_the_events_of_the_observer_queue(case: str):
    steps, said = CASES[case]
    queued, _ = await _run(steps, said, ride=False)
    inline, relay = await _run(steps, said, ride=True)
    assert inline == queued and queued
    assert not relay.inline  # cleaned up with its service
    assert relay.bus._closed  # pyright: ignore[reportPrivateUsage]


async def test_a_relay_the_pipeline_does_not_observe_stays_off_the_frame_path():
    """Riding a service whose pipeline lacks the relay changes nothing: it sees no frame."""
    llm = ScriptedLLM([Say("Hello.")])
    relay = StewardRelay()
    relay.ride(llm)
    log = EventLog(relay)
    async with TextPipeline(llm) as pipeline:
        await pipeline.say("hi")
        await pipeline.settle()
        assert not relay.inline
    assert log.events == []


class _Broken(StewardRelay):
    def see(self, data: Any) -> None:
        raise RuntimeError("relay bug")


async def test_a_failing_relay_in_place_does_not_break_the_frame_path():
    llm = ScriptedLLM([Say("Hello there.")])
    relay = _Broken()
    relay.ride(llm)
    async with TextPipeline(llm, observers=[relay]) as pipeline:
        await pipeline.say("hi")
        await pipeline.settle()
        assert relay.inline
        assert pipeline.spoken == ["Hello there."]
