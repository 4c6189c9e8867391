"""`end_session`, `transfer` and escalation do something in Pipecat: the pipeline ends after the
goodbye is spoken, and hand-overs reach the flow's hand-over tool and the app's callback."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import random
from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.handover import Handover
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.simulate import ScriptedModel, scenario_step
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

ROOT = Path(__file__).resolve().parents[2]
BELLA = ROOT / "bots" / "bella_notte"
GOODBYE = "Please call us at 555-0100"


async def _play(name: str, steward: Steward) -> TextPipeline:
    scenario = load_scenario(BELLA / "scenarios" / f"{name}.yaml")
    model = ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(12)])
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        for turn in scenario.turns:
            if pipeline.worker.has_finished():
                break
            model.queue = [scenario_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(12 - llm.remaining))
            await pipeline.say(turn.user)
            await pipeline.settle()
        async with asyncio.timeout(5):
            while not pipeline.worker.has_finished():
                await asyncio.sleep(0.02)
    return pipeline


async def test_end_session_ends_the_pipeline_after_the_goodbye_is_spoken() -> None:
    steward = Steward(load_agent(BELLA), rng=random.Random(0))
    pipeline = await _play("steer_back", steward)
    assert pipeline.worker.has_finished(), "the pipeline ended by itself"
    assert GOODBYE in " ".join(pipeline.spoken[-2:]), "the goodbye was spoken before the end"
    assert steward.session.ended


async def test_a_hand_over_calls_the_tool_and_the_app_callback() -> None:
    seen: list[Handover] = []

    async def on_handover(handover: Handover) -> None:
        seen.append(handover)

    steward = Steward(load_agent(BELLA), rng=random.Random(0), on_handover=on_handover)
    scenario = load_scenario(BELLA / "scenarios" / "declined_date_hands_over.yaml")
    model = ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(12)])
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        for turn in scenario.turns:
            model.queue = [scenario_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(12 - llm.remaining))
            await pipeline.say(turn.user)
            await pipeline.settle()
    assert [h.kind for h in seen] == ["escalation"]
    assert seen[0].tool_called and seen[0].summary in seen[0].message
    assert "pass you to a colleague" in seen[0].message
    fired = [c.name for t in steward.session.turns for c in t.fired]
    assert fired[-1] == "transfer_to_agent"


async def test_s2s_ends_after_the_goodbye_and_hands_over() -> None:
    scenario = load_scenario(BELLA / "scenarios" / "steer_back.yaml")
    traces = await run_scenario_s2s(BELLA, scenario)
    assert traces[-1]["ended"] and traces[-1]["status"] == "escalated"
    tags = {e["tag"] for e in traces[-1]["events"]}
    assert {"end_session", "handover"} <= tags


def test_the_readme_hand_over_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Hand-overs and hanging up", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out
    assert "hand-over (escalation)" in out
    assert "pass you to a colleague" in out
