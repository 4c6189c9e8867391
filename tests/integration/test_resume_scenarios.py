"""A scenario stops halfway and a second scenario, on a fresh steward (another worker), resumes
the same conversation identity from the checkpoint store — SQLite and Redis."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.storage_support.redis_server import redis_server

from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints import Identity, open_store
from pipecat_steward.testing.scenario import check_expectations, load_scenario
from pipecat_steward.testing.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bots" / "order_desk"
HALVES = ROOT / "tests" / "fixtures" / "order_desk_resume"


@pytest.fixture(params=["sqlite", "redis"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'calls.sqlite'}"
        return
    with redis_server(tmp_path) as url:
        yield url


async def play(spec: str, part: str) -> list[dict]:
    store = open_store(spec)
    try:
        checkpointer = Checkpointer(store, Identity("acme", "order_desk", "call-42"))
        scenario = load_scenario(HALVES / f"{part}.yaml")
        traces = await run_scenario(AGENT, scenario, checkpointer=checkpointer)
        played = scenario.turns[len(scenario.turns) - len(traces) :]
        problems = [
            p
            for t, turn in zip(traces, played, strict=True)
            for p in check_expectations(t, turn.checks)
        ]
        assert problems == []
        return traces
    finally:
        await store.close()


async def test_a_second_scenario_resumes_the_call(store_spec: str) -> None:
    first = await play(store_spec, "part1")
    assert first[-1]["transaction"]["status"] == "AWAITING_CONFIRMATION"
    second = await play(store_spec, "part2")
    assert second[0]["transaction"]["status"] == "COMPLETED"
    again = await play(store_spec, "part2")
    assert again == [], "the finished second half is not replayed"
