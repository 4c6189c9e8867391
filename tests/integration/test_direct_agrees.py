"""The framework-free driver (used by the crash tests) and the real pipeline agree, turn by turn,
on every example bot's scenarios."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path

import pytest

from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenarios
from pipecat_steward.testing.simulate import run_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = sorted(p for p in BOTS.glob("*/scenarios/*.yaml"))
KEYS = (
    "llm_calls",
    "fired",
    "bot",
    "phase",
    "asks",
    "slots",
    "status",
    "transaction",
    "checklist",
    "gate",
)


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parts[-3]}/{p.stem}" for p in SCENARIOS])
async def test_direct_player_matches_the_pipeline(path: Path) -> None:
    for scenario in load_scenarios(path):
        piped = await run_scenario(path.parents[1], scenario)
        direct = await run_scenario_direct(path.parents[1], scenario.model_copy(deep=True))
        assert [{k: t[k] for k in KEYS} for t in direct] == [{k: t[k] for k in KEYS} for t in piped]
