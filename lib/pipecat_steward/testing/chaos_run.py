"""Run many chaos conversations against an agent: counts per invariant and shrunk reproducers.

``run_chaos`` plays seeds ``seed .. seed + n - 1`` through the direct driver and checks every
single-path invariant on each; every ``resume_every``-th conversation is also resumed from a
mid-call checkpoint, and the first ``agree`` ones are replayed through the real cascaded
pipeline (the first ``agree_s2s`` also through the speech-to-speech one, the first ``slm`` with
the monitor and extractor on a chaotic logic_slm when the agent has one). The first
counterexample of each invariant is shrunk and, given ``out``, written as a
scenario file.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipecat_steward.agent.loader import Agent
from pipecat_steward.testing.chaos import PlayedConversation, generate
from pipecat_steward.testing.chaos_invariants import (
    INVARIANTS,
    Violation,
    check,
    check_agreement,
    check_resume,
)
from pipecat_steward.testing.chaos_slm import check_monitored
from pipecat_steward.testing.shrink import shrink, violations_of, write_scenario

__all__ = ["ChaosReport", "run_chaos"]


@dataclass
class ChaosReport:
    """What a chaos run found.

    Attributes:
        agent: The agent's name.
        conversations: How many were played.
        turns: Caller turns played in all.
        seconds: Wall time.
        counts: Invariant → conversations that broke it.
        first: Violation class (``Violation.key``) → ``(seed, violation)`` of its first
            counterexample.
        written: Scenario files written for the shrunk counterexamples.
    """

    agent: str
    conversations: int = 0
    turns: int = 0
    seconds: float = 0.0
    counts: Counter[str] = field(default_factory=lambda: Counter[str]())
    first: dict[str, tuple[int, Violation]] = field(default_factory=lambda: {})
    written: list[Path] = field(default_factory=lambda: [])
    kept: dict[str, PlayedConversation] = field(default_factory=lambda: {})

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        rate = self.conversations / self.seconds if self.seconds else 0.0
        head = f"{self.agent}: {self.conversations} conversations, {self.turns} turns, {rate:.0f} conversations/s"
        return [head] + [f"  {name:26} {self.counts.get(name, 0)}" for name in INVARIANTS]


async def run_chaos(
    agent: Agent,
    *,
    n: int,
    seed: int = 0,
    resume_every: int = 10,
    agree: int = 0,
    out: Path | None = None,
    arg_faults: bool = True,
    agree_s2s: int = 0,
    slm: int = 0,
) -> ChaosReport:
    """Play ``n`` seeded conversations against ``agent`` (see ``chaos_agent``)."""
    report = ChaosReport(agent.name)
    start = time.perf_counter()
    for number, current in enumerate(range(seed, seed + n)):
        conversation = await generate(agent, current, arg_faults=arg_faults)
        found = check(agent, conversation)
        if resume_every and number % resume_every == 0:
            found += await check_resume(agent, conversation, max(1, len(conversation.traces) // 2))
        if number < agree:
            found += await check_agreement(agent, conversation)
        if number < agree_s2s:
            found += await check_agreement(agent, conversation, s2s=True)
        if number < slm:
            found += await check_monitored(agent, conversation)
        report.conversations += 1
        report.turns += len(conversation.traces)
        for name in {v.invariant for v in found}:
            report.counts[name] += 1
        for violation in found:
            if violation.key not in report.first:
                report.first[violation.key] = (current, violation)
                report.kept[violation.key] = conversation
    report.seconds = time.perf_counter() - start
    if out is not None:
        await _write(agent, report, out)
    return report


async def _write(agent: Agent, report: ChaosReport, out: Path) -> None:
    for key, (current, violation) in sorted(report.first.items()):
        scenario = await shrink(agent, report.kept[key].scenario, key)
        again = await violations_of(agent, scenario, violation.invariant, slm=key.endswith("-slm"))
        shrunk = next((v for v in again if v.key == key), violation)
        path = out / f"{key}_{current}.yaml".replace("-", "_")
        report.written.append(write_scenario(path, scenario, shrunk))
