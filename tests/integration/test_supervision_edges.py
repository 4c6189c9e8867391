"""Supervision at run time, on the clinic bot: vetoes name their real cause, no double charge."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split
import asyncio
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import AwaitJudge, Verdict
from pipecat_steward.runtime.session import StewardSession

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


async def _never(_: AwaitJudge) -> Verdict | None:
    await asyncio.sleep(10)
    return None


async def _nothing_satisfied(_: AwaitJudge) -> Verdict | None:
    return Verdict()


async def _satisfied(pending: AwaitJudge) -> Verdict | None:
    return Verdict(satisfied=pending.steps)


async def ready_to_pay(judge: Any) -> StewardSession:
    session = StewardSession(load_agent(CLINIC), judge=judge, gate_timeout_s=0.05)
    session.host_write({"customer_auth_status": "verified", "copay_amount": 40})
    sup = session.supervisor
    assert sup is not None
    session.host_write(sup.verdict(session.state.variables, Verdict(satisfied=("confirm_identity",))))
    await session.agent_tool_call("find_patient", {"name": "Ada Lovelace", "date_of_birth": "1990-12-10"})
    await session.agent_tool_call("show_appointment", {"patient_id": "pat-1815"})
    await session.agent_tool_call("attach_patient_headshot", {"patient_id": "pat-1815"})
    return session


@pytest.mark.parametrize(
    ("judge", "reason", "words"),
    [
        (None, "monitor_unavailable", "No procedure monitor is available"),
        (_never, "judge_timeout", "could not be confirmed in time"),
        (_nothing_satisfied, "prerequisites", "must be completed first"),
    ],
)
async def test_a_closed_payment_veto_names_its_real_cause(judge: Any, reason: str, words: str) -> None:
    session = await ready_to_pay(judge)
    call = await session.agent_tool_call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    assert call.outcome == "refused"
    assert call.result["reason"] == reason
    assert words in call.result["error"]
    if reason != "judge_timeout":
        assert "in time" not in call.result["error"]


async def test_a_second_charge_is_vetoed_and_names_the_first_receipt() -> None:
    session = await ready_to_pay(_satisfied)
    first = await session.agent_tool_call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    assert first.outcome == "ok"
    second = await session.agent_tool_call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    assert second.outcome == "refused" and second.result["reason"] == "already_done"
    assert "rcpt-pat-1815-40.00" in second.result["error"]
    assert [g["decision"] for g in session.turn.gates] == ["allow", "veto"]


async def test_the_kill_switch_stops_every_logic_slm_call_and_gates_stay_deterministic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pipecat_steward.testing.scripted_slm import (
        ScriptedSLM,
        VerdictOracle,
        run_scenario_monitored,
    )
    from pipecat_steward.testing.simulate import load_scenario

    monkeypatch.setenv("STEWARD_MONITOR_ENABLED", "0")
    scenario = load_scenario(CLINIC / "scenarios" / "appointment_to_payment.yaml")
    oracle = VerdictOracle()
    async with ScriptedSLM(answer=oracle) as slm:
        traces, monitor, extractor = await run_scenario_monitored(CLINIC, scenario, slm, oracle=oracle)
        requests = list(slm.requests)
    assert requests == [] and monitor.stats.slm_calls == 0 and extractor.stats.calls == 0
    gates = [g for t in traces for g in t["gate"] if g["tool"] == "collect_payment"]
    assert [(g["decision"], g.get("reason")) for g in gates] == [("veto", "monitor_unavailable")]


FAULTS = {
    "lie": ("allow", None),
    "garbage": ("veto", "monitor_unavailable"),
    "stall": ("veto", "judge_timeout"),
    "fail": ("veto", "monitor_unavailable"),
}


@pytest.mark.parametrize("mode", sorted(FAULTS))
async def test_a_faulty_logic_slm_is_expressible_as_a_scenario_file(mode: str) -> None:
    from pipecat_steward.testing.scripted_slm import (
        ScriptedSLM,
        VerdictOracle,
        run_scenario_monitored,
    )
    from pipecat_steward.testing.simulate import check_expectations, load_scenario

    scenario = load_scenario(CLINIC / "scenarios" / "faults" / f"slm_{mode}.yaml")
    oracle = VerdictOracle(stall_s=2.0)
    async with ScriptedSLM(answer=oracle) as slm:
        traces, monitor, _ = await run_scenario_monitored(CLINIC, scenario, slm, oracle=oracle)
    problems = [
        p
        for t, turn in zip(traces, scenario.turns, strict=True)
        for p in check_expectations(t, turn.checks)
    ]
    assert problems == []
    [gate] = [g for t in traces for g in t["gate"]]
    assert (gate["decision"], gate.get("reason")) == FAULTS[mode]
    if mode in ("garbage", "fail"):
        assert monitor.stats.failures >= 1
