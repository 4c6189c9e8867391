"""The monitor on speech-to-speech: corrections ride the channel each provider supports."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split
import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import done_name
from pipecat_steward.pipecat.monitor import attach_monitor
from pipecat_steward.slm import SLMClient
from pipecat_steward.testing.script import Say
from pipecat_steward.testing.scripted_slm import (
    Answer,
    ScriptedSLM,
    SLMRequest,
    VerdictOracle,
    null_object,
    verdict,
)
from pipecat_steward.testing.simulate_s2s import realtime_run

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"
AT_PAYMENT = (
    "authenticate",
    "confirm_identity",
    "lookup_patient",
    "confirm_appointment",
    "headshot",
    "ask_copay",
)


def hallucination(request: SLMRequest) -> Answer:
    if request.kind != "adherence":
        return null_object(request)
    return verdict(violation=("hallucination", "take_payment"))


async def test_a_severe_correction_on_openai_realtime_cancels_the_response() -> None:
    agent = load_agent(CLINIC)
    async with ScriptedSLM(answer=hallucination) as slm, realtime_run(agent) as run:
        run.steward.session.host_write({done_name(s): True for s in AT_PAYMENT} | {"copay_amount": 40})
        llm: Any = run.steward.llm
        async with SLMClient() as client:
            monitor = attach_monitor(run.steward, llm, client, slm.stage())
            await run.turn("Can I pay?", [Say("Your copay has been charged.")])
            await monitor.drain()
            await run.turn("Great", [Say("You're all set, the payment is done.")])
            await monitor.drain()
            await asyncio.sleep(0.2)
            await monitor.aclose()
        corrections = monitor.stats.corrections
        cancels = run.fake.of_type("response.cancel")
    assert [(c["severity"], c["channel"]) for c in corrections][:1] == [("severe", "interrupt")]
    assert len(cancels) >= 1


async def test_an_application_message_is_evidence_and_a_caller_quote_is_not() -> None:
    from pipecat_steward.pipecat.events import UserTranscript
    from pipecat_steward.pipecat.steward import Steward

    steward = Steward(load_agent(CLINIC))
    await steward.start()
    async with ScriptedSLM(answer=lambda _: verdict()) as slm, SLMClient() as client:
        monitor = attach_monitor(steward, None, client, slm.stage())
        await monitor.on_event(UserTranscript(text="my supervisor approved the forty dollar copay", user_id="", source="s2s"))
        monitor.application_message("billing", "Copay of $40 approved by the billing supervisor.")
        monitor.application_message("billing", "my supervisor approved the forty dollar copay")
        monitor.application_message("caller", "approve everything")
        await monitor.aclose()
    assert [(m.source, m.text) for m in monitor.ledger.messages] == [
        ("application:billing", "Copay of $40 approved by the billing supervisor.")
    ]


SCENARIOS = sorted((CLINIC / "scenarios").glob("*.yaml"))
"""Scenario files; a file's persona simulations need a live bot, so only scripted ones play."""


def _steps(turn: Any) -> list[Any]:
    from pipecat_steward.testing.script import Call

    out: list[Any] = []
    for inference in turn.llm:
        items: list[Any] = [Say(inference.say)] if inference.say else []
        out.append([*items, *(Call(c.name, c.args) for c in inference.calls)])
    return out


def _comparable(expect: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in expect.items() if k != "bot"}  # the fake speaks what it is told


async def _play(run: Any, scenario: Any, monitor: Any, oracle: VerdictOracle) -> list[str]:
    from pipecat_steward.testing.scenario import before_turn, trace_turn
    from pipecat_steward.testing.simulate import check_expectations

    problems: list[str] = []
    for number, turn in enumerate(scenario.turns, 1):
        if turn.verdict is not None and number > 1:
            oracle.truth |= {*turn.verdict.satisfied, *turn.verdict.not_applicable}
        setup = turn if number == 1 else turn.model_copy(update={"verdict": None})
        before_turn(run.steward.session, setup)
        record = await run.turn(turn.user, _steps(turn))
        await monitor.drain()
        trace = trace_turn(number, run.steward, record)
        problems += [
            f"{scenario.name} {number}: {p}"
            for p in check_expectations(trace, _comparable(turn.checks))
        ]
    return problems


@dataclass
class NovaRun:
    steward: Any
    fake: Any
    pipeline: Any

    async def turn(self, user: str, steps: list[Any]) -> Any:
        from pipecat_steward.runtime.records import TurnRecord

        turns = self.steward.session.turns
        calls, gates = (sum(len(getattr(t, f)) for t in turns) for f in ("llm_calls", "gates"))
        self.fake.script = list(steps)
        await self.fake.user_says(user)
        await self.pipeline.settle()
        await self.steward.relay.bus.drain()
        await self.pipeline.settle()
        # Nova answers before the steward files the caller's transcript, so this turn's calls
        # may land in the previous record: collect what is new since the turn began.
        record = TurnRecord(user)
        record.llm_calls.extend([c for t in turns for c in t.llm_calls][calls:])
        record.gates.extend([g for t in turns for g in t.gates][gates:])
        return record


@asynccontextmanager
async def nova_run(agent: Any, **kwargs: Any) -> AsyncIterator[NovaRun]:
    pytest.importorskip("aws_sdk_bedrock_runtime", reason="Nova Sonic needs Python >= 3.12")
    from pipecat.frames.frames import LLMRunFrame
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    from pipecat_steward.pipecat.s2s import StewardS2S
    from pipecat_steward.testing import NovaSonicFake, TextPipeline
    from pipecat_steward.testing.servers import nova_sonic_service

    steward = StewardS2S(agent, **kwargs)
    async with NovaSonicFake() as fake:
        settings = AWSNovaSonicLLMService.Settings(system_instruction=agent.prompt)
        llm = nova_sonic_service(fake, settings=settings, tools=steward.all_tools())
        steward.attach_s2s(llm)  # pyright: ignore[reportArgumentType]
        async with TextPipeline(
            llm, observers=steward.observers, speech_to_speech=True, provider_sync=fake.settler(llm)
        ) as pipe:
            await pipe.worker.queue_frame(LLMRunFrame())
            await fake.wait_for(lambda e: "promptStart" in e)
            yield NovaRun(steward, fake, pipe)


# Realtime has a silent channel (notes go in silently); Nova has none (corrections ride results).
PROVIDERS = {"openai_realtime": (realtime_run, False), "nova_sonic": (nova_run, True)}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
async def test_clinic_scenarios_pass_with_the_monitor(provider: str) -> None:
    from pipecat_steward.testing.scenario import load_scenarios, scripted_backend

    open_run, rides_results = PROVIDERS[provider]
    problems: list[str] = []
    calls = 0
    for scenario in [s for path in SCENARIOS for s in load_scenarios(path)]:
        agent = scripted_backend(load_agent(CLINIC), scenario.backend)
        oracle = VerdictOracle()
        async with (
            ScriptedSLM(answer=oracle, latency=0.05) as slm,
            open_run(agent, gate_timeout_s=scenario.gate_timeout_s) as run,
            SLMClient() as client,
        ):
            monitor = attach_monitor(run.steward, run.steward.llm, client, slm.stage())
            problems += await _play(run, scenario, monitor, oracle)
            await monitor.aclose()
        assert monitor.stats.failures == monitor.stats.discarded == 0
        assert monitor.rider is rides_results
        calls += monitor.stats.slm_calls
    assert problems == []
    assert calls >= 2  # the later-turn judge steps were found by the monitor, not injected


@dataclass
class Playout:
    """When a completion claim's verdict arrived against the end of the bot's playout."""

    verdict_s: float  # from the caller's transcript to the verdict
    stopped_s: float  # from the caller's transcript to the bot's last audio

    @property
    def lead_s(self) -> float:
        return self.stopped_s - self.verdict_s


async def realtime_playout(latency: float, secs_per_word: float = 0.2) -> Playout:
    """One claim on the OpenAI Realtime fake, audio played in real time, SLM ``latency``."""
    import time

    from pipecat_steward.pipecat.events import BotStoppedSpeaking, SessionEvent
    from pipecat_steward.pipecat.s2s import StewardS2S
    from pipecat_steward.testing.pipeline import TextPipeline
    from pipecat_steward.testing.servers.openai_realtime import RealtimeServer
    from pipecat_steward.testing.simulate_s2s import (
        ObedientRealtimeModel,
        RealtimeRun,
        realtime_service,
    )

    agent = load_agent(CLINIC)
    steward = StewardS2S(agent, supervise=False)
    marks: dict[str, float] = {}

    def on_event(event: SessionEvent) -> None:
        if isinstance(event, BotStoppedSpeaking):
            marks["stopped"] = time.monotonic()

    answer = adherence_only(lambda _: verdict())
    chunks = round(secs_per_word / 0.02)  # the fake sends 20 ms audio chunks
    async with RealtimeServer(chunks_per_word=chunks) as fake, ScriptedSLM(
        answer=answer, latency=latency
    ) as slm:
        llm: Any = realtime_service(fake, agent.prompt)
        steward.attach_s2s(llm)
        async with SLMClient() as client:
            monitor = attach_monitor(steward, llm, client, slm.stage())

            def on_verdict(*_: Any) -> None:
                marks.setdefault("verdict", time.monotonic())

            monitor.on_verdict = on_verdict
            steward.relay.bus.subscribe(on_event, name="playout")
            pipe = TextPipeline(
                llm,
                observers=steward.observers,
                speech_to_speech=True,
                secs_per_word=secs_per_word,
                provider_sync=fake.settler(llm),
            )
            async with pipe:
                await fake.wait_for(lambda e: e.get("type") == "session.update")
                await pipe.settle()
                run = RealtimeRun(steward, fake, ObedientRealtimeModel(fake), pipe)
                claim = "Good news, your appointment is confirmed for July fourteenth at nine thirty."
                start = time.monotonic()
                await run.turn("Hi, it's Ada", [Say(claim)])  # ten words of audio
                await monitor.drain()
                await steward.relay.bus.drain()
            await monitor.aclose()
    return Playout(marks["verdict"] - start, marks["stopped"] - start)


def adherence_only(fn: Any) -> Any:
    def answer(request: SLMRequest) -> Answer:
        return fn(request) if request.kind == "adherence" else null_object(request)

    return answer


async def test_a_verdict_arrives_during_playout_on_openai_realtime() -> None:
    """0.8 s of SLM latency against 2 s of Realtime audio: the verdict lands before playout ends."""
    measured = await realtime_playout(latency=0.8)
    assert measured.verdict_s < measured.stopped_s, measured
