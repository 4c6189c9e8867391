"""Supervision reaches a session through the port it was built with, never by setting its fields."""

from __future__ import annotations

from pathlib import Path

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import AwaitJudge, Verdict
from pipecat_steward.runtime.oversight import Oversight
from pipecat_steward.runtime.session import StewardSession

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


async def _judge(_: AwaitJudge) -> Verdict | None:
    return None


async def _other(_: AwaitJudge) -> Verdict | None:
    return Verdict()


def _rider() -> str | None:
    return "note"


def test_plugging_and_unplugging_leave_another_monitors_hooks_alone() -> None:
    port = Oversight()
    port.plug(_judge, _rider)
    port.plug(_judge, _rider)  # a monitor started twice rides once
    assert port.judge is _judge and port.riders == [_rider]
    port.unplug(_other, None)  # another monitor leaving takes nothing of this one
    assert port.judge is _judge and port.riders == [_rider]
    port.unplug(_judge, _rider)
    assert port.judge is None and port.riders == []


def test_a_session_reads_its_judge_and_riders_from_the_port_it_was_given() -> None:
    port = Oversight(_judge)
    session = StewardSession(load_agent(CLINIC), oversight=port)
    assert session.oversight is port and session.judge is _judge
    port.plug(_other, _rider)
    assert session.judge is _other and session.result_riders == [_rider]
    assert StewardSession(load_agent(CLINIC), judge=_judge).judge is _judge
