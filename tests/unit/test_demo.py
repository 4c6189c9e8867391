"""``steward demo`` plays the Bella Notte reservation to a booked table."""

from __future__ import annotations

import pytest
from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat import warnings

# isort: split

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.cli.demo import BOTS
from pipecat_steward.cli.main import main
from pipecat_steward.exceptions import ConfigError


def test_demo_books_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "bot (llm): Just to confirm — 4 guests, July 17th. Is that correct?" in out
    assert "engine → confirm_pending() ok" in out
    assert (
        "bot (llm): Just to confirm — under the name Chen, no special requests. Is that correct?"
        in out
    )
    assert "Your table is booked! Your confirmation number is BN-" in out
    assert out.rstrip().endswith("== status: complete")


def test_bella_notte_tools_validate() -> None:
    agent = load_agent(BOTS / "bella_notte")
    basics = agent.tools["set_reservation_basics"]
    assert basics(party_size=12)["field_errors"] == {"party_size": "out_of_range"}
    assert basics(preferred_date="2020-01-01")["field_errors"] == {"preferred_date": "past_date"}
    assert (
        agent.tools["find_available_times"](party_size=2, preferred_date="2026-07-20")["success"]
        is False
    )


def test_missing_agent_folder_is_a_clear_error(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="no agent.yaml here"):
        load_agent(str(tmp_path))


def test_simulate_monitor_adds_slm_fields(capsys: pytest.CaptureFixture[str]) -> None:
    """`steward simulate --monitor` attaches the monitor; the trace carries its fields."""
    import json

    clinic = BOTS / "clinic"
    assert (
        main(
            [
                "simulate",
                "--monitor",
                "--json",
                str(clinic),
                str(clinic / "scenarios" / "appointment_to_payment.yaml"),
            ]
        )
        == 0
    )
    traces = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")
    ]
    assert len(traces) == 6 and all(
        {"slm_calls", "corrections", "extracted"} <= set(t) for t in traces
    )
    assert sum(t["slm_calls"] for t in traces) >= 1, (
        "the judge steps were assessed by the logic_slm"
    )
    assert traces[-1]["checklist"]["steps"]["take_payment"] == "done"
