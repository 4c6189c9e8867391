"""Every call of an agent function has a deadline: a tool the model calls, a transaction's
executor and an exit call as much as a flow task's executor.

A stalled call is answered with an informative ``timeout`` result when its deadline passes, its
late result is ignored, and the turn's trace records a ``tool_timeout`` event.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.deadlines import DEFAULT_DEADLINE_S, deadline
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.runtime.transactions import TransactionSession
from pipecat_steward.testing.backend import scripted_backend

ROOT = Path(__file__).resolve().parents[2]
CLINIC = load_agent(ROOT / "bots" / "clinic")
BELLA = load_agent(ROOT / "bots" / "bella_notte")
ORDERS = load_agent(ROOT / "bots" / "order_desk")


def test_the_deadline_of_a_call_is_the_override_then_its_task_then_the_default() -> None:
    executor, task = next((t, names[0]) for t, names in BELLA.flow.executors.items())
    own = BELLA.flow.task[task].config.timeout_s
    assert deadline(BELLA, executor) == deadline(BELLA, executor, task=task) == own
    assert deadline(BELLA, executor, override=0.25) == 0.25
    assert deadline(CLINIC, "find_patient") == DEFAULT_DEADLINE_S
    assert deadline(CLINIC, "find_patient", override=0.25) == 0.25


@pytest.mark.parametrize("behaviour", [{"hang": True}, {"delay_s": 0.6, "result": {"ok": 1}}])
async def test_a_stalled_agent_tool_takes_its_failure_path_at_the_deadline(
    behaviour: dict[str, object],
) -> None:
    agent = scripted_backend(CLINIC, {"find_patient": [behaviour]})
    session = StewardSession(agent, task_timeout_s=0.1)
    session.decide("I'm Ana Lopez, born 1990-04-12")
    start = time.perf_counter()
    async with asyncio.timeout(2):  # without a deadline the call never returns
        call = await session.agent_tool_call(
            "find_patient", {"name": "Ana Lopez", "date_of_birth": "1990-04-12"}
        )
    assert time.perf_counter() - start < 0.5
    assert call.outcome == "error"
    assert call.result["error_code"] == "timeout"
    assert "outcome is unknown" in str(call.result["message"])
    assert [e.tag for e in session.turn.events].count("tool_timeout") == 1
    assert session.turn.llm_calls[-1].result["error_code"] == "timeout"


async def test_a_stalled_exit_call_and_transaction_executor_are_bounded_too() -> None:
    name = next(iter(ORDERS.tools))
    agent = scripted_backend(ORDERS, {name: [{"hang": True}]})
    session = TransactionSession(agent, task_timeout_s=0.1)
    start = time.perf_counter()
    async with asyncio.timeout(2):
        result = await session.invoke(name, {})
    assert time.perf_counter() - start < 0.5
    assert result["error_code"] == "timeout"
