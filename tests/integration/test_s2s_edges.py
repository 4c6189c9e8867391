"""Edge guarantees on the speech-to-speech path (OpenAI Realtime fake behind pipecat's real
service): the same bot scenarios the cascade and the direct driver play meet their expectations
here too."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path

import pytest

from pipecat_steward.testing.simulate import check_expectations, load_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

BOTS = Path(__file__).resolve().parents[2] / "bots"
# What the S2S path must agree on (its bot text is the model's rendering of the steer).
KEYS = ("llm_calls", "fired", "slots", "status", "phase", "visible", "hidden", "events", "ended")


SCENARIOS = [
    "bella_notte/whitespace_utterances",
    "bella_notte/event_prefill_caller_wins",
    "bella_notte/event_prefill_typed",
    "bella_notte/bad_tool_arguments",
    "bella_notte/tool_exceptions",
    "bella_notte/executor_timeout",
    "bella_notte/declined_date_hands_over",
    "bella_notte/steer_back",
    "lead_capture/stall_escape",
    "bella_notte/deflect_twice",
    "bella_notte/deflect_name_twice",
    "bella_notte/retry_bound_across_corrections",
]


@pytest.mark.parametrize("name", SCENARIOS)
async def test_scenario_expectations_hold_on_s2s(name: str) -> None:
    bot, stem = name.split("/")
    scenario = load_scenario(BOTS / bot / "scenarios" / f"{stem}.yaml")
    traces = await run_scenario_s2s(BOTS / bot, scenario)
    problems = [
        f"turn {t['turn']}: {p}"
        for t, turn in zip(traces, scenario.turns, strict=True)
        for p in check_expectations(t, {k: v for k, v in turn.checks.items() if k in KEYS})
    ]
    assert problems == []
