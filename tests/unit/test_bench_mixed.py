"""``scripts/bench_mixed``: a call that raised or differs from its scenario alone fails the goal."""

from __future__ import annotations

from collections import Counter
from types import ModuleType

import pytest
from tests.bench_support import script_module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return script_module("bench_mixed")


@pytest.mark.parametrize(
    ("errors", "differ", "verdict"),
    [
        ({}, {}, ": met."),
        ({"TimeoutError": 3}, {"bot/a/a": 3}, "**NOT met**"),
        ({}, {"bot/a/a": 1}, "**NOT met**"),
    ],
)
def test_the_goal_is_met_only_when_no_call_raised_or_differs(
    bench: ModuleType, errors: dict[str, int], differ: dict[str, int], verdict: str
) -> None:
    outcome = bench.Outcome(calls=10, seconds=1.0, errors=Counter(errors), differ=Counter(differ))
    text = bench.section([], 5, outcome)
    assert verdict in text.splitlines()[-1]
    for name in (*errors, *differ):
        assert name in text


def test_an_unknown_bot_is_named(bench: ModuleType) -> None:
    with pytest.raises(SystemExit, match="no_such_bot"):
        bench.jobs_of(["lead_capture", "no_such_bot"])


async def test_a_call_that_raises_is_reported_not_raised(bench: ModuleType) -> None:
    job = bench.jobs_of(["lead_capture"])[0]
    broken = bench.Job(job.name, job.agent, job.scenario.model_copy(update={"turns": None}))
    assert (await bench.trace(broken)).startswith("raised ")
