"""What ``scripts/bench_load`` measures and how it reports: rounds, the collector, memory, verdicts.

A round of one variant at one N becomes a :class:`Run`; the CPU goal is decided from the rounds'
ratio and its bootstrap interval (:func:`cpu_ratio`); :func:`section` writes the Load section of
docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import gc
import os
import platform
import re
import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.intervals import Interval, paired_interval, percentile, verdict

LEFT_GOAL = 10.0
"""Objects a finished call may leave behind, on average: a few (a cache filled once), never the
call itself (a call kept in memory is over a thousand objects)."""

_LOOP_TURNS = 10
"""Turns of the event loop given to a finished call's callbacks before its objects are counted."""

__all__ = [
    "CollectorClock",
    "Memory",
    "Results",
    "Run",
    "collector_share",
    "cpu_ratio",
    "idle_session_bytes",
    "left_call_objects",
    "live_call_bytes",
    "median_memory",
    "merge",
    "section",
]


@dataclass
class Run:
    """One variant at one N."""

    variant: str
    n: int
    calls: int = 0
    completed: int = 0
    errors: list[str] = field(default_factory=lambda: [])
    differing: int = 0
    turns: int = 0
    latencies: list[float] = field(default_factory=lambda: [])
    cpu_ms_per_turn: list[float] = field(default_factory=lambda: [])  # one per round
    gc_ms_per_turn: list[float] = field(default_factory=lambda: [])  # of it, the collector's
    process_of_round: list[int] = field(default_factory=lambda: [])  # empty: all in one

    def row(self) -> dict[str, Any]:
        lat = sorted(self.latencies) or [0.0]
        return {
            "completed": self.completed,
            "errors": len(self.errors),
            "differing": self.differing,
            "p50_ms": 1000 * statistics.median(lat),
            "p99_ms": 1000 * percentile(lat, 99),
            "cpu_ms_per_turn": statistics.median(self.cpu_ms_per_turn or [0.0]),
            "gc_ms_per_turn": statistics.median(self.gc_ms_per_turn or [0.0]),
        }


class CollectorClock:
    """Seconds CPython's cycle collector ran, timed by ``gc``'s own start and stop callbacks.

    A collection runs on the thread that triggered it and nothing else runs meanwhile, so its
    wall time is CPU time the calls pay; with many calls in a process it is a large share.
    Use it as a context manager: it times collections while the block runs.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


@dataclass(frozen=True)
class Memory:
    """Bytes per session: an idle steward session, and a live call of each variant."""

    idle_heap: float
    idle_rss: float
    live_n: int = 0  # the calls at once the live figures were taken with
    live_plain: float = 0.0
    live_steward: float = 0.0
    left_plain: float = 0.0  # objects a finished call leaves behind, per call
    left_steward: float = 0.0


Results = dict[str, tuple[list[Run], Memory]]
"""Per bot: its runs (plain then steward per N) and its memory per session."""


def rss_bytes() -> int:
    """This process's resident set size (Linux)."""
    text = Path("/proc/self/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(match.group(1)) * 1024 if match else 0


async def idle_session_bytes(bot: Path, count: int = 200) -> tuple[float, float]:
    """Memory per idle steward session (agent loaded once, sessions started).

    Returns:
        Python heap bytes per session (tracemalloc, exact) and resident bytes per session
        (RSS, coarse: the allocator reuses pages it already holds).
    """
    agent = load_agent(bot)
    gc.collect()
    tracemalloc.start()
    heap, rss = tracemalloc.get_traced_memory()[0], rss_bytes()
    stewards = [Steward(agent) for _ in range(count)]
    for steward in stewards:
        await steward.start()
    gc.collect()
    heap_per = (tracemalloc.get_traced_memory()[0] - heap) / count
    rss_per = (rss_bytes() - rss) / count
    tracemalloc.stop()
    del stewards
    return heap_per, rss_per


async def live_call_bytes(call: Callable[[list[float]], Awaitable[Any]], n: int) -> float:
    """Peak Python heap per call while ``n`` calls run at once (tracemalloc, exact).

    The peak counts what the calls hold and their garbage the collector has not reached yet.
    RSS cannot be split per call in a process that already ran calls: the allocator reuses the
    pages it holds.
    """
    gc.collect()
    tracemalloc.start()  # also resets the peak
    try:
        base = tracemalloc.get_traced_memory()[0]
        await asyncio.gather(*(call([]) for _ in range(n)))
        return (tracemalloc.get_traced_memory()[1] - base) / n
    finally:
        tracemalloc.stop()


async def left_call_objects(call: Callable[[list[float]], Awaitable[Any]], n: int = 10) -> float:
    """Objects the cycle collector tracks per finished call, still there once ``n`` calls ended.

    Two calls run first, so what a process fills once (caches, first imports) is not counted.
    A call that stays in memory after it ended shows here (a thousand objects or more), and
    every later full collection walks it. Counted, not weighed: the heap's size in bytes
    moves by a few kB between runs as its tables grow, whatever the calls keep.
    """

    async def settled() -> int:
        # The done callbacks a finished pipeline scheduled still hold its call: let them run.
        for _ in range(_LOOP_TURNS):
            await asyncio.sleep(0)
        gc.collect()
        return len(gc.get_objects())

    for _ in range(2):
        await call([])
    base = await settled()
    for _ in range(n):
        await call([])
    return max(0.0, (await settled() - base) / n)


def section(
    results: Results,
    min_calls: int = 1,
    processes: int = 1,
    variants: Sequence[tuple[str, str]] = (),
) -> str:
    """The Markdown section of ``results``.

    Args:
        results: Each bot's runs and memory.
        min_calls: Calls per round at least.
        processes: Processes the rounds ran in.
        variants: The variants measured, each a (short name, description): the section is
            then ``## Load (names)``, its own, and says what each variant is.
    """
    machine = (
        f"{os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}"
    )
    title = "Load" + (f" ({', '.join(name for name, _ in variants)})" if variants else "")
    lines = [
        f"## {title}",
        "",
        *(f"Variant: {description}." for _, description in variants),
        *([""] if variants else []),
        f"Measured by `scripts/bench_load` on a machine with {machine}: N copies of one scenario "
        "at once in one process through real pipelines (text mode, scripted model), **plain** "
        "(no steward: the model makes the tool calls the steward's model made in the reference "
        "call, in as many inferences, and the backend calls its engine made, answered by plain "
        "pipecat function "
        "handlers that run the agent's same functions the same way, and says every word the "
        "steward's bot spoke) and **steward** (with its defaults: it sends client messages only "
        "where the pipeline has pipecat's RTVI observer to deliver them, and each call ends its "
        "conversation events as a host does, so every event is built within the call), in "
        "rounds that "
        "alternate the two variants. *completed* "
        "counts calls over all rounds (a round runs batches of N calls one after another until it "
        f"holds at least {min_calls}, so that its CPU time is long enough to measure); *differ* counts calls whose trace is not identical to a "
        "single-call reference; latency is from the caller's transcript to the start of the "
        "inference (it includes the text-mode turn end, 50 ms); CPU is the process's CPU time "
        "over the calls' turns, the median of the rounds. The rounds pair the variants back to "
        "back, each going first in every other pair; the steward/plain ratio below is their CPU "
        "time summed over the rounds, with a 95 % bootstrap interval over the "
        + (
            f"{processes} processes the rounds ran in, one after another (each process's rounds "
            "summed: the ratio moves more between processes than between the rounds of one)"
            if processes > 1
            else "rounds of one process"
        )
        + ": the goal "
        "is met when the whole interval is within it, not met when all of it is beyond, and "
        "undecided otherwise. Goals: every call completes with the "
        "reference trace wherever plain does; steward CPU per turn ≤ 1.2× plain; ≤ 0.5 MB per "
        "idle session; no finished call left in memory (fewer than 10 objects the cycle "
        "collector tracks per call, counted over 10 calls after 2 first ones: a kept call is "
        "over a thousand). *of it GC* is the part of "
        "the CPU time spent in CPython's cycle collector (timed by its own callbacks), which "
        "grows with the objects the process holds.",
        "",
        "| bot | N | variant | completed | errors | differ | p50 ms | p99 ms | CPU ms/turn "
        "| of it GC |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts: list[str] = []
    for bot, (runs, memory) in results.items():
        for run in runs:
            r = run.row()
            lines.append(
                f"| {bot} | {run.n} | {run.variant} | {r['completed']}/{run.calls} | {r['errors']} "
                f"| {r['differing']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} "
                f"| {r['cpu_ms_per_turn']:.2f} | {r['gc_ms_per_turn']:.2f} |"
            )
        verdicts += _verdicts(bot, runs, memory)
    return "\n".join([*lines, "", *verdicts, ""]) + "\n"


def cpu_ratio(plain: Run, steward: Run) -> Interval:
    """Steward/plain CPU per turn over all rounds, and its 95 % bootstrap interval.

    On a shared machine one round's CPU time moves by half its size with whatever else runs,
    in either variant, so a single pair decides nothing. The rounds' sums are compared, and
    resampling the rounds shows how far that ratio could move on another run. Rounds run in
    several processes are resampled by process, since the ratio moves more between processes.
    """
    pairs = list(zip(plain.cpu_ms_per_turn, steward.cpu_ms_per_turn, strict=True))
    if len(set(steward.process_of_round)) > 1:  # resample processes: each one's rounds summed
        sums: dict[int, tuple[float, float]] = {}
        for process, (p, s) in zip(steward.process_of_round, pairs, strict=True):
            before = sums.get(process, (0.0, 0.0))
            sums[process] = (before[0] + p, before[1] + s)
        pairs = list(sums.values())

    def ratio(sample: Sequence[tuple[float, float]]) -> float:
        return sum(s for _, s in sample) / max(1e-9, sum(p for p, _ in sample))

    return paired_interval(pairs, ratio)


def collector_share(run: Run) -> float:
    """The part of a variant's CPU time, over all its rounds, spent in the cycle collector."""
    return sum(run.gc_ms_per_turn) / max(1e-9, sum(run.cpu_ms_per_turn))


def _verdicts(bot: str, runs: list[Run], memory: Memory) -> list[str]:
    out: list[str] = []
    pairs = [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]
    for plain, steward in pairs:
        p, s = plain.row(), steward.row()
        ratio = cpu_ratio(plain, steward)
        whole = steward.completed == steward.calls and not steward.differing
        met = "met" if whole or plain.completed < plain.calls else "NOT met"
        out.append(
            f"- {bot}, N={steward.n}: steward/plain CPU per turn **{ratio.value:.3f}×** "
            f"(95 % interval {ratio.low:.3f}–{ratio.high:.3f}: {verdict(ratio, 1.2)}), "
            f"p99 latency {s['p99_ms']:.1f} vs {p['p99_ms']:.1f} ms; the cycle collector "
            f"{collector_share(steward):.0%} of the steward's CPU and {collector_share(plain):.0%} "
            f"of plain's; all calls whole and identical: {met}."
        )
    heap, rss = memory.idle_heap / 1e6, memory.idle_rss / 1e6
    live = memory.live_steward / max(1.0, memory.live_plain)
    out.append(
        f"- {bot}: {heap:.3f} MB of Python heap per idle session "
        f"({'met' if heap <= 0.5 else 'NOT met'}; {rss:.3f} MB RSS growth; 200 sessions, agent "
        f"loaded once). A live call, {memory.live_n} at once: {memory.live_steward / 1e6:.2f} MB "
        f"of peak Python heap with the steward, {memory.live_plain / 1e6:.2f} MB plain "
        f"({live:.2f}×). Left in memory by a finished call: {memory.left_steward:.1f} objects "
        f"with the steward, {memory.left_plain:.1f} plain "
        f"({'met' if memory.left_steward < LEFT_GOAL else 'NOT met'}: no call is kept)."
    )
    return out


def merge(per_process: Sequence[list[Run]]) -> list[Run]:
    """The runs of several processes as one run per variant and N, each round's process kept."""
    merged: list[Run] = []
    for parts in zip(*per_process, strict=True):
        run = Run(parts[0].variant, parts[0].n)
        for process, part in enumerate(parts):
            run.calls += part.calls
            run.completed += part.completed
            run.errors += part.errors
            run.differing += part.differing
            run.turns += part.turns
            run.latencies += part.latencies
            run.cpu_ms_per_turn += part.cpu_ms_per_turn
            run.gc_ms_per_turn += part.gc_ms_per_turn
            run.process_of_round += [process] * len(part.cpu_ms_per_turn)
        merged.append(run)
    return merged


def median_memory(dumps: Sequence[dict[str, Any]], bot: str) -> Memory:
    """Each memory figure's median over the processes."""
    figures = [d[bot]["memory"] for d in dumps]
    medians = {k: statistics.median(f[k] for f in figures) for k in figures[0]}
    return Memory(**{**medians, "live_n": int(medians["live_n"])})
