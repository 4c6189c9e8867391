"""Conversation-quality measures over simulation traces.

- re-asks: a slot asked again although it was already filled, inferred or declined;
- asks per turn: how many slots the bot asked for per caller turn (the rule is at most two);
- turns per completion: caller turns until the session completed (median over scenarios);
- declined raised again: asks of a slot after the caller declined it;
- inferred confirmed aloud: inferred slots whose inference was stated to the caller.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

__all__ = ["summarise"]

Trace = dict[str, Any]


def summarise(runs: Sequence[Sequence[Trace]]) -> dict[str, Any]:
    """Aggregate the measures over several scenario runs."""
    turns = [t for run in runs for t in run]
    completions = [_turns_to_complete(run) for run in runs]
    done = [c for c in completions if c is not None]
    inferred = _inferred(runs)
    return {
        "scenarios": len(runs),
        "turns": len(turns),
        "re_asks": sum(_re_asks(run) for run in runs),
        "asks_per_turn": round(sum(len(t["asks"]) for t in turns) / len(turns), 3)
        if turns
        else 0.0,
        "max_asks_in_a_turn": max((len(t["asks"]) for t in turns), default=0),
        "turns_per_completion": statistics.median(done) if done else None,
        "completed": f"{len(done)}/{len(runs)}",
        "declined_raised_again": sum(_declined_again(run) for run in runs),
        "inferred_confirmed_aloud": f"{inferred[0]}/{inferred[1]}",
    }


def _re_asks(run: Sequence[Trace]) -> int:
    count, settled = 0, set[str]()
    for trace in run:
        count += len(settled & set(trace["asks"]))
        settled |= {
            n
            for n, s in trace["slots"].items()
            if s["status"] in ("filled", "inferred", "declined")
        }
    return count


def _declined_again(run: Sequence[Trace]) -> int:
    count, declined = 0, set[str]()
    for trace in run:
        count += len(declined & set(trace["asks"]))
        declined |= {n for n, s in trace["slots"].items() if s["status"] == "declined"}
    return count


def _turns_to_complete(run: Sequence[Trace]) -> int | None:
    return next((t["turn"] for t in run if t["status"] == "complete"), None)


def _inferred(runs: Sequence[Sequence[Trace]]) -> tuple[int, int]:
    spoken = total = 0
    for run in runs:
        names = {n for t in run for n, s in t["slots"].items() if s["status"] == "inferred"}
        told = {
            line.strip()[2:].split(":", 1)[0]
            for t in run
            for h in t["hints"]
            if h["tag"] == "confirm_inferred"
            for line in h["text"].splitlines()
            if line.strip().startswith("- ")
        }
        total += len(names)
        spoken += len(names & told)
    return spoken, total
