"""The monitor and the extractor on a real pipeline with a scripted logic_slm."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import done_name
from pipecat_steward.pipecat.events import BotStoppedSpeaking, SessionEvent
from pipecat_steward.pipecat.extractor import EntityExtractor, attach_extractor
from pipecat_steward.pipecat.monitor import ProcedureMonitor, attach_monitor
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger
from pipecat_steward.testing import Call, FunctionStep, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.scenario import load_scenarios
from pipecat_steward.testing.scripted_llm import ContextSnapshot
from pipecat_steward.testing.scripted_slm import (
    Answer,
    Fail,
    ScriptedSLM,
    SLMRequest,
    VerdictOracle,
    null_object,
    run_scenario_monitored,
    verdict,
)
from pipecat_steward.testing.simulate import check_expectations, load_scenario

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"
SCENARIOS = [s for p in sorted((CLINIC / "scenarios").glob("*.yaml")) for s in load_scenarios(p)]
AT_COPAY = ("authenticate", "confirm_identity", "lookup_patient", "confirm_appointment", "headshot")


@dataclass
class Rig:
    steward: Steward
    llm: ScriptedLLM
    pipeline: TextPipeline
    monitor: ProcedureMonitor
    extractor: EntityExtractor
    queue: list[Any]
    ledger: MemoryLedger

    async def turn(self, user: str, *steps: Any) -> None:
        self.queue[:] = list(steps)
        await self.pipeline.say(user)
        await self.pipeline.settle()
        await self.steward.relay.bus.drain()
        await self.monitor.drain()
        await self.extractor.drain()


@asynccontextmanager
async def rig(
    slm: ScriptedSLM,
    *,
    done: tuple[str, ...] = (),
    secs_per_word: float = 0.0,
    agent: Path = CLINIC,
    **monitor: Any,
) -> AsyncIterator[Rig]:
    steward = Steward(load_agent(agent))
    await steward.start()
    steward.session.host_write({done_name(s): True for s in done})
    queue: list[Any] = []

    def model(_: ContextSnapshot) -> Any:
        return queue.pop(0) if queue else ()

    llm = ScriptedLLM([FunctionStep(model) for _ in range(40)])
    steward.attach(llm)
    ledger = MemoryLedger()
    async with SLMClient(ledger=ledger) as client:
        mon = attach_monitor(steward, llm, client, slm.stage(), **monitor)
        ext = attach_extractor(steward, client, slm.stage())
        async with TextPipeline(
            llm, observers=steward.observers, secs_per_word=secs_per_word
        ) as pipeline:
            yield Rig(steward, llm, pipeline, mon, ext, queue, ledger)
        await mon.aclose()


def adherence(fn: Any) -> Any:
    """Answer adherence checks with ``fn``; extraction gets nulls."""

    def answer(request: SLMRequest) -> Answer:
        return fn(request) if request.kind == "adherence" else null_object(request)

    return answer


async def test_a_speculative_check_answers_during_playout() -> None:
    """0.8 s of SLM latency against a 2 s utterance: the verdict lands before playout ends."""
    order: list[str] = []
    async with (
        ScriptedSLM(answer=adherence(lambda _: verdict()), latency=0.8) as slm,
        rig(slm, secs_per_word=0.2) as r,
    ):

        def log(event: SessionEvent) -> None:
            if isinstance(event, BotStoppedSpeaking):
                order.append("bot_stopped")

        r.steward.relay.bus.subscribe(log, name="order")
        r.monitor.on_verdict = lambda request, _: order.append(f"verdict:{request.reason}")
        claim = "Good news, your appointment is confirmed for July fourteenth at nine thirty."
        await r.turn("Hi, it's Ada", Say(claim))  # ten words: two seconds of audio
    assert order[:2] == ["verdict:completion_claim", "bot_stopped"]


async def test_clinic_scenarios_pass_with_the_monitor_finding_the_verdicts() -> None:
    """Later-turn verdicts come from the monitor, not injection; checks per turn stay <= 0.3."""
    calls = turns = 0
    problems: list[str] = []
    for scenario in SCENARIOS:
        oracle = VerdictOracle()
        async with ScriptedSLM(answer=oracle, latency=0.05) as slm:
            traces, monitor, _ = await run_scenario_monitored(CLINIC, scenario, slm, oracle=oracle)
        problems += [
            f"{scenario.name} {t['turn']}: {p}"
            for t, turn in zip(traces, scenario.turns, strict=True)
            for p in check_expectations(t, turn.checks)
        ]
        assert monitor.stats.failures == monitor.stats.discarded == 0
        assert sum(t["slm_calls"] for t in traces) == monitor.stats.slm_calls
        calls, turns = calls + monitor.stats.slm_calls, turns + len(traces)
    assert problems == []
    assert calls / turns <= 0.3


async def test_a_judge_gated_payment_reuses_the_in_flight_assessment() -> None:
    scenario = load_scenario(CLINIC / "scenarios" / "appointment_to_payment.yaml")
    oracle = VerdictOracle()
    async with ScriptedSLM(answer=oracle, latency=0.4) as slm:
        traces, monitor, _ = await run_scenario_monitored(CLINIC, scenario, slm, oracle=oracle)
        checks = slm.of_kind("adherence")
    assert traces[-1]["gate"] == [{"tool": "collect_payment", "decision": "allow"}]
    assert monitor.stats.reused == 1 and len(checks) == monitor.stats.slm_calls == 2


@pytest.mark.parametrize("failure", ["down", "garbage", "wrong_shape", "http_500", "slow"])
async def test_every_monitor_fault_fails_open(failure: str) -> None:
    answers: dict[str, Answer] = {
        "garbage": "sure! the caller agreed",
        "wrong_shape": {"x": 1},
        "http_500": Fail(500),
        "slow": {},
    }
    async with ScriptedSLM(answer=lambda _: answers.get(failure, {})) as slm:
        if failure == "down":
            await slm.stop()
        async with rig(slm, done=AT_COPAY, timeout=0.2 if failure == "slow" else None) as r:
            if failure == "slow":
                slm.latency = 1.0
            await r.turn("Hi", Say("Your copay is $40 — pay it now?"))
            await r.turn(
                "Yes please",
                Call("collect_payment", {"patient_id": "p", "amount": 40}),
                Say("Sorry, one moment."),
            )
            spoken = list(r.pipeline.spoken)
            stats = r.monitor.stats
    assert spoken == ["Your copay is $40 — pay it now?", "Sorry, one moment."]
    assert stats.failures >= 1 and stats.corrections == []


def hallucinating(step: str) -> Any:
    return adherence(lambda _: verdict(violation=("hallucination", step)))


async def test_a_severe_correction_is_exactly_one_turn() -> None:
    async with (
        ScriptedSLM(answer=hallucinating("take_payment")) as slm,
        rig(slm, done=(*AT_COPAY, "ask_copay")) as r,
    ):
        await r.turn("Can I pay?", Say("Your copay has been charged."))
        before = len(r.llm.inferences)
        await r.turn("Great", Say("You're all set, the payment is done."))
        extra = len(r.llm.inferences) - before
        corrections = r.monitor.stats.corrections
        notes = r.llm.inferences[-1].seen.notes
    assert [(c["severity"], c["channel"]) for c in corrections] == [("severe", "interrupt")]
    assert extra == 2  # the caller's turn, and one response to the correction
    assert any(n.startswith("[Procedure check]") for n in notes)


async def test_a_note_is_silent_and_delivered_at_the_next_caller_turn() -> None:
    skipped = adherence(lambda _: verdict(violation=("skipped_step", "ask_copay")))
    async with ScriptedSLM(answer=skipped) as slm, rig(slm, done=AT_COPAY) as r:
        await r.turn("Hi", Say("Your photo is attached."))
        await r.turn("Cool", Say("Anything else today?"))
        counted = len(r.llm.inferences)
        await r.turn("What about the copay?", Say("It's $40."))
        corrections = r.monitor.stats.corrections
        turns = len(r.llm.inferences) - counted
        notes = r.llm.inferences[-1].seen.notes
    assert [(c["kind"], c["channel"]) for c in corrections] == [("skipped_step", "silent_note")]
    assert turns == 1  # the caller's own turn: the note asked for no response
    assert any("Ask about the copay" in n for n in notes)


async def test_budget_zero_observes_only(tmp_path: Path) -> None:
    shutil.copytree(CLINIC, tmp_path / "clinic")
    config = tmp_path / "clinic" / "agent.yaml"
    config.write_text(
        config.read_text().replace("max_corrections_per_step: 1", "max_corrections_per_step: 0")
    )
    skipped = adherence(lambda _: verdict(violation=("skipped_step", "ask_copay")))
    agent = tmp_path / "clinic"
    async with ScriptedSLM(answer=skipped) as slm, rig(slm, done=AT_COPAY, agent=agent) as r:
        await r.turn("Hi", Say("Your photo is attached."))
        await r.turn("Cool", Say("Anything else today?"))
        await r.turn("No", Say("Bye."))
        stats = r.monitor.stats
    assert stats.corrections == [] and {o["why"] for o in stats.observed} >= {"observe only"}


async def test_on_a_service_without_a_silent_channel_the_note_rides_the_next_tool_result() -> None:
    skipped = adherence(lambda _: verdict(violation=("skipped_step", "ask_copay")))
    async with ScriptedSLM(answer=skipped) as slm, rig(slm, done=AT_COPAY, rider=True) as r:
        await r.turn("Hi", Say("Your photo is attached."))
        await r.turn("Cool", Say("Anything else today?"))
        await r.turn(
            "Send my summary", Call("send_visit_summary", {"patient_id": "p"}), Say("Sent.")
        )
        result = r.llm.calls[-1].result
        corrections = r.monitor.stats.corrections
    assert [c["channel"] for c in corrections] == ["tool_result_rider"]
    assert result["steward_correction"].startswith("[Procedure check]")


async def test_extraction_writes_caller_facts_and_secure_capture_starves_it() -> None:
    def answer(request: SLMRequest) -> Answer:
        if request.kind != "extraction":
            return verdict()
        found = "1990-12-10" if '"1990"' in request.user else None
        return {**null_object(request), "date_of_birth": found}

    async with ScriptedSLM(answer=answer) as slm, rig(slm) as r:
        await r.turn("I'm Ada, born December 10th")
        r.steward.session.host_write({"secure_capture_active": True})
        await r.turn("4242 4242 4242 4242")
        r.steward.session.host_write({"secure_capture_active": False})
        await r.turn("1990")
        variables = dict(r.steward.session.state.variables)
        prompts = [q.user for q in slm.of_kind("extraction")]
        rows = [e.scope for e in r.ledger.events]
    assert variables["date_of_birth"] == "1990-12-10"
    assert len(prompts) == 2 and not any("4242" in p for p in prompts)
    assert "born December 10th" in prompts[-1]
    assert rows.count("extraction") == 2  # metered


async def test_extraction_coalesces_when_calls_pile_up() -> None:
    async with ScriptedSLM(answer=null_object, latency=0.5) as slm, rig(slm) as r:
        await r.pipeline.say("one")
        while not slm.requests:  # the first call is running
            await asyncio.sleep(0.01)
        for text in ("two", "three"):
            await r.pipeline.say(text)
        await r.pipeline.settle()
        await r.steward.relay.bus.drain()
        await r.extractor.drain()
        prompts = [q.user for q in slm.of_kind("extraction")]
    assert len(prompts) == 2 and prompts[0].endswith('"one"')
    assert '- "two"' in prompts[1] and prompts[1].endswith('"three"')
