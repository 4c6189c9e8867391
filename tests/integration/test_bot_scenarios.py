"""Every example bot's scenarios run through the real pipeline and meet their expectations."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import warnings
from pathlib import Path

import pytest
from pipecat.evals.scenario import EvalScenarioFile, EvalScriptScenario

from pipecat_steward.testing.expectations import check_turns
from pipecat_steward.testing.scenario import load_scenarios
from pipecat_steward.testing.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[2]
BOTS = sorted(p.parent for p in (ROOT / "bots").glob("*/agent.yaml"))
SCENARIOS = sorted(p for p in (ROOT / "bots").glob("*/scenarios/*.yaml"))
ALL_SCENARIO_FILES = SCENARIOS + sorted((ROOT / "tests" / "fixtures").rglob("*/part*.yaml"))


def test_every_bot_has_scenarios() -> None:
    assert BOTS, "no example bots found"
    scripted = {p.parts[-3] for p in SCENARIOS if load_scenarios(p)}
    assert scripted == {b.name for b in BOTS}


def test_no_scenario_files_outside_scenarios_folders() -> None:
    strays = [p for b in BOTS for p in b.glob("*.yaml") if p.name != "agent.yaml"]
    assert strays == []


@pytest.mark.parametrize("path", ALL_SCENARIO_FILES, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
def test_pipecat_eval_loads_every_scenario_file(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the deprecated top-level shape warns
        loaded = EvalScenarioFile.load(path)
    ours = load_scenarios(path)
    scripted = [s for s in loaded if isinstance(s, EvalScriptScenario)]
    assert [s.name for s in scripted] == [s.name for s in ours]
    for theirs, mine in zip(scripted, ours, strict=True):
        assert [t.user for t in theirs.turns] == [t.user for t in mine.turns]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
async def test_scenario(path: Path) -> None:
    for scenario in load_scenarios(path):
        traces = await run_scenario(path.parents[1], scenario)
        assert len(traces) == len(scenario.turns)
        assert check_turns(traces, scenario.turns) == {}
