"""`WaitBudget` counts polls, not seconds: a late poll costs what an on-time one does."""

from __future__ import annotations

import asyncio
import time

import pytest

from pipecat_steward.testing import WaitBudget


@pytest.mark.parametrize(("seconds", "interval", "polls"), [(0.05, 0.01, 5), (0.02, 0.005, 4)])
async def test_a_wait_that_never_ends_fails_after_its_polls(
    seconds: float, interval: float, polls: int
) -> None:
    asked = 0

    def never() -> bool:
        nonlocal asked
        asked += 1
        return False

    with pytest.raises(TimeoutError, match="the answer: still waiting"):
        await WaitBudget(seconds, "the answer").until(never, interval)
    assert asked == polls + 1  # asked before each poll, and once more when the budget is spent


async def test_late_polls_cost_no_more_than_on_time_ones() -> None:
    """Polls the loop runs late (it was busy) stretch the bound past its seconds."""
    budget = WaitBudget(0.05, "the answer")  # 10 polls of 5 ms
    started = time.monotonic()
    for _ in range(9):
        time.sleep(0.02)  # the loop is busy elsewhere: every poll comes late
        await budget.poll()
    assert time.monotonic() - started > 0.05 * 3  # far past the bound in seconds: still waiting
    await budget.poll()
    with pytest.raises(TimeoutError):
        await budget.poll()


async def test_first_returns_when_a_future_is_done_and_fails_when_none_is() -> None:
    loop = asyncio.get_running_loop()
    soon: asyncio.Future[int] = loop.create_future()
    loop.call_later(0.02, soon.set_result, 1)
    await WaitBudget(1.0, "soon").first(soon)
    assert soon.result() == 1
    never: asyncio.Future[int] = loop.create_future()
    with pytest.raises(TimeoutError, match="never"):
        await WaitBudget(0.02, "never").first(never)
    assert not never.cancelled()  # waiting on it does not cancel it
