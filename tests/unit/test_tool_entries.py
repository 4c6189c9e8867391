"""Every tool entry checks argument names before user code runs, and contains what user code raises."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.arguments import ToolParams, argument_problem, function_params
from pipecat_steward.runtime.session import StewardSession

BOTS = Path(__file__).resolve().parents[2] / "bots"


def _takes(a: int, b: str | None = None) -> dict[str, Any]:
    return {}


def _open(a: int, **rest: Any) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize(
    ("fn", "args", "unexpected", "missing"),
    [
        (_takes, {"a": 1}, None, None),
        (_takes, {"a": 1, "b": "x"}, None, None),
        (_takes, {"b": "x"}, [], ["a"]),
        (_takes, {"a": None}, [], ["a"]),
        (_takes, {"a": 1, "c": 2}, ["c"], []),
        (_takes, {"guests": 4}, ["guests"], ["a"]),
        (_open, {"a": 1, "anything": 2}, None, None),
        (_open, {"anything": 2}, [], ["a"]),
    ],
)
def test_argument_names_are_checked(
    fn: Any, args: dict[str, Any], unexpected: Any, missing: Any
) -> None:
    problem = argument_problem("tool", function_params(fn), args)
    if unexpected is None:
        assert problem is None
        return
    assert problem is not None
    assert (problem["unexpected"], problem["missing"]) == (unexpected, missing)
    assert problem["error_code"] == "bad_arguments"
    assert "a (required)" in problem["message"]


def test_a_tool_without_parameters_names_that() -> None:
    problem = argument_problem("confirm_pending", ToolParams({}, ()), {"x": 1})
    assert problem is not None and "no arguments" in problem["message"]


def _bella(**tools: Any) -> StewardSession:
    agent = load_agent(BOTS / "bella_notte")
    session = StewardSession(dataclasses.replace(agent, tools={**agent.tools, **tools}))
    session.decide("Hi", first_turn=True)
    session.decide("A table for four on the 17th")
    return session


def test_bella_setter_with_a_wrong_name_is_answered_with_the_expected_names() -> None:
    session = _bella()
    call = session.tool_call("set_reservation_basics", {"guests": 4})
    assert call.outcome == "error"
    assert call.result["unexpected"] == ["guests"]
    assert set(call.result["expected"]) == {"party_size", "preferred_date"}
    assert [e.slot for e in session.state.slot_errors] == ["party_size"]
    action = session.decide("")
    assert action.preempt and "How many guests" in action.message


def test_a_steward_tool_with_an_unknown_name_is_answered_not_raised() -> None:
    session = _bella()
    call = session.tool_call("decline_slot", {"slot": "special_requests", "why": "x"})
    assert call.result["unexpected"] == ["why"]
    call = session.tool_call("decline_slot", {})
    assert call.result["missing"] == ["slot"]


def _boom(**_: Any) -> dict[str, Any]:
    raise ValueError("secret value 555-0100 in the message")


def test_a_raising_validator_is_contained_logged_and_traced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = _bella(set_reservation_basics=_boom)
    with caplog.at_level(logging.ERROR):
        call = session.tool_call("set_reservation_basics", {"party_size": 4})
    assert call.outcome == "error"
    assert call.result["error_code"] == "tool_exception"
    assert "555-0100" not in str(call.result)  # the model gets the type, not the message
    assert any(r.exc_info for r in caplog.records), "logged with its traceback"
    assert [e.tag for e in session.turn.events][-1] == "tool_exception"


@pytest.mark.parametrize("result", [None, "ok", 3, ["x"]])
def test_a_validator_returning_a_non_mapping_is_contained(result: Any) -> None:
    session = _bella(set_reservation_basics=lambda **_: result)
    call = session.tool_call("set_reservation_basics", {"party_size": 4})
    assert call.result["error_code"] == "bad_result"


async def test_an_agent_tool_with_wrong_names_never_runs() -> None:
    agent = load_agent(BOTS / "clinic")
    name = agent.llm_tools[0]
    session = StewardSession(agent)
    call = await session.agent_tool_call(name, {"no_such_argument": 1})
    assert call.outcome == "error"
    assert call.result["unexpected"] == ["no_such_argument"]


async def test_a_slow_executor_takes_its_failure_path_at_the_deadline_and_its_late_result_is_dropped() -> None:
    import asyncio

    from pipecat_steward.core.slots import ToolCall

    finished: list[bool] = []

    async def slow(**_: Any) -> dict[str, Any]:
        await asyncio.sleep(0.4)
        finished.append(True)
        return {"success": True, "available_times": "18:00"}

    session = _bella(find_available_times=slow)
    session.task_timeout_s = 0.05
    call = ToolCall(
        "find_available_times",
        {"party_size": 4, "preferred_date": "2026-07-17"},
        "executor",
        "FindAvailableTimes",
    )
    done = await session.run_call(call)
    assert done.outcome == "error" and done.result["error_code"] == "timeout"
    assert [e.tag for e in session.turn.events][-1] == "tool_timeout"
    action = session.decide("")
    assert action.preempt and "fully booked" in action.message  # the retry message, this turn
    await asyncio.sleep(0.5)
    assert finished == [] and "available_times" not in session.state.variables


def test_every_task_has_a_deadline_by_default() -> None:
    from pipecat_steward.core.slots.config import TaskConfig

    assert TaskConfig(name="T", tool="t").timeout_s == 10.0
    with pytest.raises(ValueError, match="timeout_s"):
        TaskConfig(name="T", tool="t", timeout_s=0)
