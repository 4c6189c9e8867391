"""Detours, honest check failures and resumption agree on every path (direct, Pipecat
cascade, speech-to-speech), and the ``--json`` trace shows both transactions with their
sequence numbers."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import check_expectations, load_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

AGENT = Path(__file__).resolve().parents[2] / "bots" / "order_desk"
NEW = ["detour_while_confirming", "detour_offer_resume", "detour_cancelled", "check_failed_retry"]


@pytest.mark.parametrize("path", ["direct", "s2s"])
@pytest.mark.parametrize("name", NEW)
async def test_the_scenario_holds_on_this_path(name: str, path: str) -> None:
    scenario = load_scenario(AGENT / "scenarios" / f"{name}.yaml")
    runner = run_scenario_direct if path == "direct" else run_scenario_s2s
    traces = await runner(AGENT, scenario)
    problems = [
        p
        for t, turn in zip(traces, scenario.turns, strict=True)
        for p in check_expectations(t, turn.checks)
    ]
    assert problems == []


def test_the_json_trace_shows_both_transactions_with_sequence_numbers() -> None:
    args = [
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "simulate",
        "--direct",
        "--json",
        str(AGENT),
        str(AGENT / "scenarios" / "detour_while_confirming.yaml"),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    traces = [json.loads(line)["transaction"] for line in done.stdout.splitlines()]
    detour, back, done_ = traces[1], traces[2], traces[3]
    assert detour["active_transaction"]["intent"] == "retail_order_track"
    assert detour["active_transaction"]["sequence"] == 2 and detour["last_transaction"] is None
    assert back["active_transaction"]["sequence"] == 1, "the set-aside cancellation, same number"
    assert back["last_transaction"] == {
        **back["last_transaction"],
        "intent": "retail_order_track",
        "sequence": 2,
        "status": "COMPLETED",
    }
    assert done_["active_transaction"] is None and done_["last_transaction"]["sequence"] == 1
    assert done_["sequence"] == 2
