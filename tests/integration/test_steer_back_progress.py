"""Steer-back counts only real drift: a conversation that makes progress on every turn after
the greeting never sees a steer-back directive, on the real pipeline or the direct driver."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import run_scenario

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
PROGRESSING = ["happy_path", "long_yes_at_the_final_readback"]


def _steer_backs(traces: list[dict[str, Any]]) -> list[tuple[str, str]]:
    hints = [(t["user"], h["tag"]) for t in traces for h in t["hints"]]
    events = [(t["user"], e["tag"]) for t in traces for e in t["events"]]
    return [(u, tag) for u, tag in hints + events if tag.startswith("steer_back")]


@pytest.mark.parametrize("name", PROGRESSING)
async def test_no_steer_back_while_the_caller_makes_progress(name: str) -> None:
    path = BELLA / "scenarios" / f"{name}.yaml"
    piped = await run_scenario(BELLA, load_scenario(path))
    direct = await run_scenario_direct(BELLA, load_scenario(path))
    assert _steer_backs(piped) == []
    assert _steer_backs(direct) == []
