"""``scripts/bench_load --where``: where a steward call's CPU time goes, sampled, per bot.

The Load section says how much more CPU a turn costs with the steward; this one says what that
CPU is spent on. One call at a time, each round runs a plain call and a steward call, timed,
then a steward call under :class:`~tests.bench_support.sampling.CpuSamples` (the handler's own
cost stays out of the timed calls).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date

from tests.bench_support.sampling import INTERVAL_S, CpuSamples

__all__ = ["SECTION", "Breakdown", "breakdown", "section"]

SECTION = "## Load (where the steward's CPU goes)"
TOP = 8
"""Entry points listed per bot; the rest are summed in one row."""

Call = Callable[[list[float]], Awaitable[object]]


@dataclass(frozen=True)
class Breakdown:
    """One bot's timed CPU per variant and the steward calls' samples."""

    bot: str
    calls: int
    plain_cpu_s: float
    steward_cpu_s: float
    samples: CpuSamples

    @property
    def ratio(self) -> float:
        """Steward over plain CPU time of the timed calls."""
        return self.steward_cpu_s / self.plain_cpu_s if self.plain_cpu_s else 0.0


async def breakdown(bot: str, plain: Call, steward: Call, calls: int) -> Breakdown:
    """Time ``calls`` calls of each variant, alternating, and sample as many steward calls."""
    for _ in range(2):  # the first calls of a process fill its caches
        await plain([])
        await steward([])
    spent = {"plain": 0.0, "steward": 0.0}
    samples = CpuSamples()
    for _ in range(calls):
        for name, call in (("plain", plain), ("steward", steward)):
            start = time.process_time()
            await call([])
            spent[name] += time.process_time() - start
        with samples:
            await steward([])
    return Breakdown(bot, calls, spent["plain"], spent["steward"], samples)


def section(results: Sequence[Breakdown]) -> str:
    """The section's Markdown, from its heading line."""
    lines = [
        SECTION,
        "",
        f"Measured by `scripts/bench_load --where` on {date.today()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}): per bot, one call at a "
        "time, rounds of a "
        "plain call and a steward call timed one after the other (process CPU time), then a "
        f"steward call sampled every {INTERVAL_S * 1000:g} ms of CPU time (`ITIMER_PROF`). A "
        "sample costs the code nothing between samples, so its shares are shares of CPU time; "
        "a call-counting profiler (cProfile) adds the same cost to every call and shows the "
        "steward's many small calls as dearer than they are. A sample is the steward's own when "
        "the first frame that is not library code (the standard library or an installed "
        "package other than pipecat: pydantic, loguru …) is the steward's package (not its "
        "testing fakes, which play the pipeline); it is counted under the outermost steward "
        "frame on the stack, the entry point the pipeline called. What the steward's own code "
        "would be if it were all of the difference: 1 − plain/steward. The ratio of one process's "
        "calls moves by several points from run to run (the Load section's interval resamples "
        "processes for that reason); the sampled share, a count of several hundred samples, "
        "moves by about one.",
    ]
    for result in results:
        lines += ["", *_bot_lines(result)]
    return "\n".join(lines) + "\n"


def _bot_lines(result: Breakdown) -> list[str]:
    samples = result.samples
    total, own = samples.total, samples.owned_samples
    difference = 1 - 1 / result.ratio if result.ratio else 0.0
    lines = [
        f"- {result.bot}: {result.calls} calls of each variant timed, steward/plain CPU "
        f"**{result.ratio:.3f}×**, so the difference is {difference:.1%} of a steward call's "
        f"CPU; the steward's own code is **{samples.share():.1%}** of it ({own} of "
        f"{total} samples over {result.calls} sampled calls).",
        "",
        "| entry point | of the call's CPU | of the steward's own |",
        "|---|---:|---:|",
    ]
    entries = samples.entries.most_common()
    shown, rest = entries[:TOP], entries[TOP:]
    rows = [(f"`{name}`", count) for name, count in shown]
    if rest:
        rows.append((f"the {len(rest)} others", sum(count for _, count in rest)))
    for label, count in rows:
        of_call = count / total if total else 0.0
        of_own = count / own if own else 0.0
        lines.append(f"| {label} | {of_call:.1%} | {of_own:.1%} |")
    return lines
