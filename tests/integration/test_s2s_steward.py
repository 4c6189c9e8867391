"""The steward on speech-to-speech services, through pipecat's real service classes offline.

OpenAI Realtime (the fake behind a real `OpenAIRealtimeLLMService`): a scenario played through
`StewardS2S` ends in the same slots, status and fired tasks as the cascaded run; a hidden tool
is vetoed with the directive; the next directive rides the tool result; the turn's directive
goes in as a note with `session.update` narrowing the tools; a preempt is a "say exactly"
note. Gemini Live and Nova Sonic (no `session.update`): veto and the directive riding the
tool result.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.pipecat_support.s2s import GENAI_3_WARNING

# isort: split

import copy
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pipecat.frames.frames import LLMRunFrame

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.pipecat.channels import LLMKind
from pipecat_steward.pipecat.s2s import NOTE_PREFIX, Steer, StewardS2S, parse_steer
from pipecat_steward.testing import Call, GeminiLiveServer, NovaSonicFake, Say, TextPipeline
from pipecat_steward.testing.script import Step
from pipecat_steward.testing.servers import gemini_live_service, nova_sonic_service
from pipecat_steward.testing.simulate import load_scenario, run_scenario
from pipecat_steward.testing.simulate_s2s import RealtimeRun, realtime_run, run_scenario_s2s

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
ASK_PARTY = "How many guests will be dining?"
READBACK = "Just to confirm — 4 guests, July 17th. Is that correct?"
TIMES = "For 4 on that date we have 18:00, 19:30, 21:00. Which time works best?"
BASICS = Call("set_reservation_basics", {"party_size": 4, "preferred_date": "2026-07-17"})
TOO_EARLY = Call("set_selected_time", {"time": "19:30"})


@pytest.fixture(scope="module")
def agent() -> Agent:
    return load_agent(BELLA)


def outcome(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """What must match between the cascaded and the S2S run."""
    slots = {n: (s["status"], s["value"]) for n, s in traces[-1]["slots"].items()}
    fired = [(f["task"], f["tool"], f["args"]) for t in traces for f in t["fired"]]
    calls = [(c["name"], c["args"], c["outcome"]) for t in traces for c in t["llm_calls"]]
    return {"slots": slots, "status": traces[-1]["status"], "fired": fired, "calls": calls}


def outputs(run: RealtimeRun) -> list[dict[str, Any]]:
    items = [e["item"] for e in run.fake.of_type("conversation.item.create")]
    return [json.loads(i["output"]) for i in items if i["type"] == "function_call_output"]


def notes(run: RealtimeRun) -> list[str]:
    items = [e["item"] for e in run.fake.of_type("conversation.item.create")]
    texts = [c["text"] for i in items if i["type"] == "message" for c in i["content"]]
    return [t for t in texts if t.startswith(NOTE_PREFIX)]


def session_tools(run: RealtimeRun) -> list[set[str]]:
    updates = [e["session"] for e in run.fake.of_type("session.update")]
    return [{t["name"] for t in s.get("tools") or []} for s in updates]


def slots(steward: StewardS2S) -> dict[str, Any]:
    return {n: (r.status, r.value) for n, r in steward.session.state.slots.items()}


async def test_happy_path_s2s_ends_like_the_cascade():
    """Same final slots (status, value), session status, fired tasks and model calls."""
    scenario = load_scenario(BELLA / "scenarios" / "happy_path.yaml")
    s2s = await run_scenario_s2s(BELLA, scenario)
    cascaded = await run_scenario(BELLA, scenario)
    assert outcome(s2s) == outcome(cascaded)
    assert outcome(s2s)["status"] == "complete"
    assert [t["bot"] for t in s2s] == [t["bot"] for t in cascaded]


async def test_hidden_tool_is_vetoed_with_the_directive(agent: Agent):
    """The model sets a time before availability is known: refused, state unchanged."""
    async with realtime_run(agent) as run:
        await run.turn("Hi there")
        before = copy.deepcopy(slots(run.steward))
        record = await run.turn("Table at 7:30 please", [TOO_EARLY])
    (refusal,) = outputs(run)
    assert refusal["error_code"] == "not_available"
    assert ASK_PARTY in refusal["directive"] and refusal["next"] == refusal["directive"]
    assert [(c.name, c.outcome) for c in record.llm_calls] == [("set_selected_time", "refused")]
    assert slots(run.steward) == before
    assert record.bot[-1].text == refusal["next"]  # the model relayed what the veto said


async def test_next_directive_rides_the_tool_result(agent: Agent):
    """After a setter the engine runs again; its readback is the result's `next`."""
    async with realtime_run(agent) as run:
        await run.turn("Hi there")
        record = await run.turn("A table for 4 on July 17th, please", [BASICS])
    (result,) = outputs(run)
    assert result["next"] == READBACK
    assert run.steward.steers[-1] == ("result", Steer("", READBACK))
    assert [u.text for u in record.bot] == [READBACK]
    assert session_tools(run)[-1] == set(record.actions[-1].visible_tools)  # and went out too


async def test_turn_directive_is_a_note_and_session_update_narrows_the_tools(agent: Agent):
    """The caller's turn yields a note with the directive and a session.update."""
    async with realtime_run(agent) as run:
        record = await run.turn("Hi there")
    (note,) = notes(run)
    assert ASK_PARTY in parse_steer(note).directive
    tools = session_tools(run)
    assert len(tools[0]) > len(tools[-1])  # every steward tool at connect, the visible ones after
    assert tools[-1] == set(record.actions[0].visible_tools)
    last = run.fake.of_type("session.update")[-1]["session"]
    assert "<system_directive>" in last["instructions"]
    kinds = [e["type"] for e in run.fake.received]
    at = run.fake.received.index(last_note_event(run))
    assert kinds[at - 1] == "session.update" and "response.create" in kinds[at + 1 :]


def last_note_event(run: RealtimeRun) -> dict[str, Any]:
    return [
        e for e in run.fake.of_type("conversation.item.create") if e["item"]["type"] == "message"
    ][-1]


async def test_preempt_is_a_say_exactly_note_that_asks_for_a_reply(agent: Agent):
    """Auto-confirm fires the availability task; its then_say is spoken verbatim."""
    async with realtime_run(agent) as run:
        await run.turn("Hi there")
        await run.turn("A table for 4 on July 17th, please", [BASICS])
        responses = len(run.fake.of_type("response.create"))
        record = await run.turn("Yes")
    assert parse_steer(notes(run)[-1]) == Steer(TIMES, "")
    assert notes(run)[-1] == f'{NOTE_PREFIX} Say exactly: "{TIMES}"'
    assert len(run.fake.of_type("response.create")) == responses + 1
    assert [c.name for c in record.fired] == ["confirm_pending", "find_available_times"]
    assert [(u.text, u.source) for u in record.bot] == [(TIMES, "preempt")]


@dataclass
class Live:
    """A StewardS2S on a real Gemini Live / Nova Sonic service and its fake."""

    steward: StewardS2S
    fake: Any
    pipeline: TextPipeline
    results: Callable[[], list[dict[str, Any]]]

    async def turn(self, user: str, steps: list[Step]) -> None:
        self.fake.script = list(steps)
        await self.fake.user_says(user)
        await self.pipeline.settle()
        await self.steward.relay.bus.drain()
        await self.pipeline.settle()


@asynccontextmanager
async def gemini_live(agent: Agent) -> AsyncIterator[Live]:
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

    steward = StewardS2S(agent)
    async with GeminiLiveServer() as fake:
        settings = GeminiLiveLLMService.Settings(system_instruction=agent.prompt)
        llm = gemini_live_service(fake, settings=settings, tools=steward.all_tools())
        # The fake, unlike Gemini, does not answer the caller's audio by itself.
        steward.attach_s2s(llm, respond=True)
        async with TextPipeline(
            llm, observers=steward.observers, speech_to_speech=True, provider_sync=fake.settler(llm)
        ) as pipe:
            await fake.wait_for(lambda m: "setup" in m)
            # As apps do: the bot opens, which gives the service its context. A note sent
            # before that would go out twice (pipecat 1.14 sends it, then the context).
            fake.script = [Say("Ciao!")]
            await pipe.worker.queue_frame(LLMRunFrame())
            await pipe.settle()
            results = lambda: [dict(r["response"]) for r in fake.tool_responses()]  # noqa: E731
            yield Live(steward, fake, pipe, results)


@asynccontextmanager
async def nova_sonic(agent: Agent) -> AsyncIterator[Live]:
    pytest.importorskip("aws_sdk_bedrock_runtime", reason="Nova Sonic needs Python >= 3.12")
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    steward = StewardS2S(agent)
    async with NovaSonicFake() as fake:
        settings = AWSNovaSonicLLMService.Settings(system_instruction=agent.prompt)
        llm = nova_sonic_service(fake, settings=settings, tools=steward.all_tools())
        steward.attach_s2s(llm)  # Nova answers the caller by itself: respond stays off
        async with TextPipeline(
            llm, observers=steward.observers, speech_to_speech=True, provider_sync=fake.settler(llm)
        ) as pipe:
            await pipe.worker.queue_frame(LLMRunFrame())  # Nova sets up once it has a context
            await fake.wait_for(lambda e: "promptStart" in e)
            results = lambda: [json.loads(r) for r in fake.tool_results()]  # noqa: E731
            yield Live(steward, fake, pipe, results)


LIVE = {LLMKind.GEMINI_LIVE: gemini_live, LLMKind.NOVA_SONIC: nova_sonic}
LIVE_KINDS = pytest.mark.parametrize(
    "kind", [pytest.param(LLMKind.GEMINI_LIVE, marks=GENAI_3_WARNING), LLMKind.NOVA_SONIC], ids=str
)


@LIVE_KINDS
async def test_live_services_veto_a_hidden_tool_with_the_directive(kind: LLMKind, agent: Agent):
    """Tools are fixed at connect: the wrapper refuses a hidden one and says what to do."""
    async with LIVE[kind](agent) as live:
        await live.turn("Hi there", [Say("Hello.")])
        before = copy.deepcopy(slots(live.steward))
        await live.turn("Table at 7:30 please", [TOO_EARLY, Say("Okay.")])
        assert live.steward.channels is not None and not live.steward.channels.tool_set_update
    (refusal,) = live.results()
    assert refusal["error_code"] == "not_available"
    # The engine runs again after the refusal, as after any tool result: ``next`` is its
    # directive now (the opening greeting is not repeated), ``directive`` the one refused under.
    assert ASK_PARTY in refusal["next"] and ASK_PARTY in refusal["directive"]
    assert slots(live.steward) == before


@LIVE_KINDS
async def test_live_services_get_the_next_directive_in_the_tool_result(kind: LLMKind, agent: Agent):
    """The readback the engine asks for after the setter rides in the result."""
    async with LIVE[kind](agent) as live:
        await live.turn("Hi there", [Say("Hello.")])
        await live.turn("A table for 4 on July 17th, please", [BASICS, Say("Okay.")])
    (result,) = live.results()
    assert result["stored"] is True and result["next"] == READBACK
    assert slots(live.steward)["party_size"] == ("pending", 4)
