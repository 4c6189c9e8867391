"""Engine benchmark: decisions per second on synthetic flows, SGD replay turns per second.

A synthetic flow of ``n`` slots is a chain of user slots ``s0 … s<n-1>`` (one setter each),
every seventh slot conditional on its predecessor, and four non-terminal tasks each taking a
quarter of the chain as inputs. The measured state is mid-conversation: the first half of the
slots filled and the tasks over them executed. Timings use ``time.perf_counter`` with a warmup
and report the median of several repetitions.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.core.slots import (
    CompiledFlow,
    compile_flow,
    decide,
    fill_slots,
    route_executor,
    step,
)
from pipecat_steward.core.state import SessionState
from pipecat_steward.replay.sgd_data import Dialogue, load_dialogues, load_schema
from pipecat_steward.replay.sgd_replay import Replayer

__all__ = [
    "SizeResult",
    "mid_state",
    "per_call_seconds",
    "replay_turns_per_second",
    "run_sizes",
    "synthetic_config",
]

TASKS = 4


def synthetic_config(n: int) -> dict[str, Any]:
    """Return a flow config with ``n`` chained user slots, conditions and four tasks."""
    slots: list[dict[str, Any]] = []
    for i in range(n):
        slot: dict[str, Any] = {"name": f"s{i}", "setter": f"set_s{i}", "ask": f"Value {i}?"}
        if i % 7 == 6:
            slot["condition"] = f"s{i - 1} != 'skip'"
        slots.append(slot)
    size = max(1, n // TASKS)
    tasks = [
        {
            "name": f"T{k}",
            "tool": f"t{k}",
            "inputs": [f"s{i}" for i in range(k * size, min(n, (k + 1) * size))],
        }
        for k in range(TASKS)
        if k * size < n
    ]
    return {"slots": slots, "tasks": tasks}


def mid_state(flow: CompiledFlow) -> SessionState:
    """Fill the first half of the slots and execute every task that becomes ready."""
    half = {s.name: f"v{i}" for i, s in enumerate(flow.slots[: len(flow.slots) // 2])}
    state = fill_slots(flow, SessionState(), half).state
    state.turn = 1
    for _ in range(len(flow.tasks) + 1):
        result = step(flow, state)
        state = result.state
        if not result.action.calls:
            break
        for call in result.action.calls:
            state = route_executor(flow, state, call.name, {"success": True}).state
    return state


def per_call_seconds(
    fn: Callable[[], object], repeats: int = 7, batch_seconds: float = 0.1
) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` timed batches, after a warmup."""
    calls = 1
    while True:  # warmup and calibration: grow the batch until it takes batch_seconds
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if time.perf_counter() - start >= batch_seconds:
            break
        calls *= 2
    samples: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


@dataclass(frozen=True, slots=True)
class SizeResult:
    """Timings of one synthetic flow size."""

    slots: int
    step_seconds: float
    decide_seconds: float

    @property
    def step_per_second(self) -> float:
        return 1 / self.step_seconds

    @property
    def decide_per_second(self) -> float:
        return 1 / self.decide_seconds


def run_sizes(sizes: Sequence[int], repeats: int = 7) -> list[SizeResult]:
    """Time ``step`` (a caller turn on the mid-conversation state) and ``decide`` per size."""
    results: list[SizeResult] = []
    for n in sizes:
        flow = compile_flow(synthetic_config(n))
        state = mid_state(flow)
        step_s = per_call_seconds(lambda f=flow, s=state: step(f, s, "hello"), repeats)
        decide_s = per_call_seconds(lambda f=flow, s=state: decide(f, s), repeats)
        results.append(SizeResult(n, step_s, decide_s))
    return results


def replay_turns_per_second(split_dir: Path, repeats: int = 3) -> tuple[int, float, float]:
    """Replay a split ``repeats`` times and measure its rate against parsing.

    Returns:
        User turns, median turns/s, and the median ratio of replay time to the time spent
        reading and parsing the split's JSON (both timed in each run, so the ratio holds
        whatever else loads the machine).
    """
    schema = load_schema(split_dir)
    rates: list[float] = []
    ratios: list[float] = []
    turns = 0
    for _ in range(repeats):
        start = time.perf_counter()
        dialogues: list[Dialogue] = list(load_dialogues(split_dir))
        parsed = time.perf_counter()
        replayer = Replayer(schema)
        for dialogue in dialogues:
            replayer.replay(dialogue)
        done = time.perf_counter()
        turns = replayer.metrics.user_turns
        rates.append(turns / (done - parsed))
        ratios.append((done - parsed) / (parsed - start))
    return turns, statistics.median(rates), statistics.median(ratios)
