"""Every example bot's scenarios run through the real pipeline and meet their expectations."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path

import pytest

from pipecat_steward.testing.simulate import check_expectations, load_scenario, run_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = sorted(p for p in BOTS.glob("*/scenarios/*.yaml"))


def test_every_bot_has_scenarios() -> None:
    assert {p.parts[-3] for p in SCENARIOS} >= {"bella_notte"}


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parts[-3]}/{p.stem}" for p in SCENARIOS])
async def test_scenario(path: Path) -> None:
    scenario = load_scenario(path)
    traces = await run_scenario(path.parents[1], scenario)
    assert len(traces) == len(scenario.turns)
    problems = [
        f"turn {t['turn']} ({t['user']!r}): {p}"
        for t, turn in zip(traces, scenario.turns, strict=True)
        for p in check_expectations(t, turn.expect)
    ]
    assert problems == []
