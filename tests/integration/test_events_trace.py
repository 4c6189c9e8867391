"""The ``steward simulate`` trace and the conversation events agree on every bot scenario.

Each scenario runs through the real cascaded pipeline, a speech-to-speech pipeline (against the
local OpenAI Realtime fake) and the direct driver; the trace built from the events it published
must equal the trace the simulator printed, turn for turn.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.events import EventPublisher
from pipecat_steward.events.trace import traces_from_events
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenarios
from pipecat_steward.testing.simulate import run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "bots").glob("*/scenarios/*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
@pytest.mark.parametrize(
    "runner",
    [run_scenario, run_scenario_direct, run_scenario_s2s],
    ids=["pipeline", "direct", "s2s"],
)
async def test_trace_is_built_from_the_events(path: Path, runner: Any) -> None:
    for scenario in load_scenarios(path):
        publisher = EventPublisher(scenario.name)
        traces = await runner(path.parents[1], scenario, events=publisher)
        rebuilt = traces_from_events(publisher.events)
        assert len(rebuilt) == len(traces)
        for printed, built in zip(traces, rebuilt, strict=True):
            diff = {k: (printed[k], built.get(k)) for k in printed if printed[k] != built.get(k)}
            assert diff == {}, f"{scenario.name} turn {printed['turn']}"
        assert [e.seq for e in publisher.events] == list(range(1, len(publisher.events) + 1))
