"""``steward test AGENT [SCENARIO...]``: play scenarios and check every expectation.

Each scenario file (or folder of them; the agent's ``scenarios/`` folder when none is named)
is played through the real pipeline in text mode, or straight through the engine with
``--direct``. After every turn the trace is checked against the turn's ``steward:`` checks and
the ``pipecat eval`` expectations a trace can answer. Failures are reported per turn, turns
counted from 1; the exit code is 0 when everything held, 1 when an expectation failed and 2
when a file or the agent could not be loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipecat_steward.exceptions import StewardError

__all__ = ["Outcome", "add_parser", "run", "scenario_paths"]


def add_parser(sub: Any) -> None:
    """Register ``steward test``."""
    parser = sub.add_parser("test", help="play scenarios and check their expectations")
    parser.add_argument("agent", type=Path, help="agent folder (agent.yaml + tools.py)")
    parser.add_argument(
        "scenarios",
        type=Path,
        nargs="*",
        help="scenario files or folders (default: AGENT/scenarios)",
    )
    parser.add_argument(
        "--direct", action="store_true", help="drive the engine without Pipecat (faster)"
    )
    parser.add_argument("--verbose", action="store_true", help="keep pipecat's own log output")
    parser.set_defaults(func=run)


@dataclass
class Outcome:
    """What one scenario did: its name, its turn count and the failures per turn."""

    name: str
    turns: int = 0
    failures: dict[int, list[str]] = field(default_factory=lambda: {})
    users: dict[int, str] = field(default_factory=lambda: {})


def scenario_paths(agent: Path, named: list[Path]) -> list[Path]:
    """The scenario files and folders to run: those named, else the agent's ``scenarios/``."""
    return named or [agent / "scenarios"]


def run(args: argparse.Namespace) -> int:
    """Play every scenario, print a report, and return the exit code."""
    if not args.verbose:
        from pipecat_steward.cli.simulate import quiet_pipecat

        quiet_pipecat()
    paths = scenario_paths(args.agent, list(args.scenarios))
    try:
        outcomes = asyncio.run(_run_all(args.agent, paths, args.direct))
    except (StewardError, ValueError, OSError) as exc:
        print(f"steward test: {exc}", file=sys.stderr)
        return 2
    failed = [o for o in outcomes if o.failures]
    print(
        f"{len(outcomes)} scenario(s): {len(outcomes) - len(failed)} passed, {len(failed)} failed"
    )
    return 1 if failed else 0


async def _run_all(agent_dir: Path, paths: list[Path], direct: bool) -> list[Outcome]:
    from pipecat_steward.agent.loader import load_agent
    from pipecat_steward.testing.scenario import load_scenarios_by_file

    agent = load_agent(agent_dir)
    scenarios, skipped = load_scenarios_by_file(paths)
    for name in skipped:
        print(f"SKIP {name} (a persona simulation: run it with pipecat eval)")
    outcomes: list[Outcome] = []
    for path, scenario in scenarios:
        try:
            outcome = await _play(agent, scenario, direct)
        except (StewardError, ValueError) as exc:
            # What the scenario gives that this agent cannot take (event data its slots cannot
            # read, say) shows as it plays: the report names the file to mend.
            raise StewardError(f"{path}: scenario {scenario.name!r}: {exc}") from exc
        _report(outcome)
        outcomes.append(outcome)
    return outcomes


async def _play(agent: Any, scenario: Any, direct: bool) -> Outcome:
    from pipecat_steward.testing.expectations import check_turns

    if direct:
        from pipecat_steward.testing.direct import run_scenario_direct as play
    else:
        from pipecat_steward.testing.simulate import run_scenario as play

    outcome = Outcome(scenario.name, len(scenario.turns))
    traces = await play(agent, scenario)
    outcome.failures = check_turns(traces, scenario.turns)
    played = zip(traces, scenario.turns, strict=False)
    outcome.users = {t["turn"]: turn.user for t, turn in played if t["turn"] in outcome.failures}
    if len(traces) < len(scenario.turns):
        outcome.failures[len(traces) + 1] = ["the scenario stopped before this turn"]
    return outcome


def _report(outcome: Outcome) -> None:
    if not outcome.failures:
        print(f"PASS {outcome.name} ({outcome.turns} turns)", flush=True)
        return
    print(f"FAIL {outcome.name} ({len(outcome.failures)} of {outcome.turns} turns)")
    for number, problems in sorted(outcome.failures.items()):
        user = outcome.users.get(number)
        print(f"  turn {number}" + (f" ({user!r})" if user is not None else "") + ":")
        print("\n".join(f"    - {p}" for p in problems), flush=True)
