"""``steward simulate AGENT_DIR SCENARIO``: run a scenario through the real pipeline, offline.

Prints a readable transcript, or one JSON object per caller turn with ``--json``. A folder (or a
file holding several scenarios) prints a ``== name`` header before each scenario's transcript.
Checking expectations is ``steward test``'s job.
``--metrics`` summarises a set of scenarios (a file or a folder of them) with the
conversation-quality measures (re-asks, turns to completion, declines, deflections …).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.exceptions import StewardError


def add_parser(sub: Any) -> None:
    """Register ``steward simulate``."""
    parser = sub.add_parser(
        "simulate", help="run a scenario through the real pipeline in text mode"
    )
    parser.add_argument("agent", type=Path, help="agent folder (agent.yaml + tools.py)")
    parser.add_argument(
        "scenario", type=Path, help="scenario file, or a folder of them (a header per scenario)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per caller turn")
    parser.add_argument("--metrics", action="store_true", help="summarise conversation quality")
    parser.add_argument("--verbose", action="store_true", help="keep pipecat's own log output")
    parser.add_argument(
        "--store", help="checkpoint store: memory: | sqlite:PATH | redis://HOST:PORT/DB"
    )
    parser.add_argument(
        "--session", default="simulate", help="session id of the conversation identity"
    )
    parser.add_argument("--tenant", default="local", help="tenant id of the conversation identity")
    parser.add_argument(
        "--on-invalid",
        choices=["fail", "fresh"],
        default="fail",
        help="a stored checkpoint that cannot be restored: fail (default) or start afresh",
    )
    parser.add_argument(
        "--direct", action="store_true", help="drive the engine without Pipecat (fast; crash tests)"
    )
    parser.add_argument(
        "--monitor",
        action="store_true",
        help="attach the procedure monitor and extractor, answered by a scripted logic_slm that "
        "knows the scenario's verdicts (traces gain slm_calls, corrections, extracted)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the scenario(s) and print traces, a transcript or metrics."""
    if not args.verbose:
        quiet_pipecat()
    try:
        return _run_files(args)
    except BrokenPipeError:
        # The reader went away (``steward simulate … --json | head``): stop quietly.
        _silence_stdout()
        return 0


def _run_files(args: argparse.Namespace) -> int:
    from pipecat_steward.testing.metrics import summarise
    from pipecat_steward.testing.scenario import load_scenario_files

    try:
        scenarios, _ = load_scenario_files([args.scenario])
        headers = len(scenarios) > 1 and not args.metrics and not args.json
        runs = [asyncio.run(_run(args, s, headers)) for s in scenarios]
    except (StewardError, ValueError) as exc:
        print(f"steward simulate: {exc}", file=sys.stderr)
        return 2
    if args.metrics:
        print(json.dumps(summarise(runs), indent=2))
    return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


async def _run(args: argparse.Namespace, scenario: Any, header: bool) -> list[dict[str, Any]]:
    """Run one scenario, checkpointed by identity when ``--store`` is given."""
    from pipecat_steward.agent.loader import load_agent
    from pipecat_steward.runtime.checkpointing import Checkpointer
    from pipecat_steward.storage.checkpoints import Identity, open_store

    if args.direct:
        from pipecat_steward.testing.direct import run_scenario_direct as run_scenario
    else:
        from pipecat_steward.testing.simulate import run_scenario

    agent = load_agent(args.agent)
    if header:
        print(f"== {scenario.name}", flush=True)
    if args.monitor:
        return await _monitored(agent, scenario, args)
    printer = None if args.metrics else (lambda t: _print(t, args.json))
    if not args.store:
        return await run_scenario(agent, scenario, on_turn=printer)
    store = open_store(args.store)
    try:
        identity = Identity(args.tenant, agent.name, args.session)
        checkpointer = Checkpointer(store, identity, on_invalid=args.on_invalid)
        if args.direct:
            return await run_scenario(agent, scenario, on_turn=printer, checkpointer=checkpointer)
        return await _recorded(args, agent, scenario, printer, checkpointer)
    finally:
        await store.close()


async def _recorded(
    args: argparse.Namespace, agent: Any, scenario: Any, printer: Any, checkpointer: Any
) -> list[dict[str, Any]]:
    """Run through the pipeline and keep the call's events in the store (``steward studio --replay``)."""
    from pipecat_steward.events import EventHub
    from pipecat_steward.events.store import open_event_store
    from pipecat_steward.testing.simulate import run_scenario

    hub = EventHub(open_event_store(args.store))
    try:
        events = await hub.open(args.session)
        return await run_scenario(
            agent, scenario, on_turn=printer, checkpointer=checkpointer, events=events
        )
    finally:
        await hub.close(args.session, "simulated")
        await hub.store.close()


async def _monitored(agent: Any, scenario: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run with the monitor and extractor; the scripted SLM answers from the scenario's truth."""
    from pipecat_steward.storage.ledger import MemoryLedger
    from pipecat_steward.testing.scripted_slm import (
        ScriptedSLM,
        VerdictOracle,
        run_scenario_monitored,
    )

    oracle = VerdictOracle()
    async with ScriptedSLM(answer=oracle) as slm:
        traces, _, _ = await run_scenario_monitored(
            agent, scenario, slm, oracle=oracle, ledger=MemoryLedger()
        )
    if not args.metrics:
        for trace in traces:
            _print(trace, args.json)
    return traces


def _print(trace: dict[str, Any], as_json: bool) -> None:
    print(json.dumps(trace, ensure_ascii=False) if as_json else _readable(trace), flush=True)


def quiet_pipecat() -> None:
    """Keep only warnings and errors of pipecat's log output (it logs every frame at DEBUG)."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def _readable(trace: dict[str, Any]) -> str:
    lines = [f"[{trace['turn']}] caller: {trace['user']}"]
    lines += [
        f"    llm → {c['name']}({_args(c['args'])}) {c['outcome']}" for c in trace["llm_calls"]
    ]
    lines += [
        f"    engine → {c['tool']}({_args(c['args'])}) {'ok' if c['ok'] else 'failed'}"
        for c in trace["fired"]
    ]
    lines += [f"    bot ({b['source']}): {b['text']}" for b in trace["bot"]]
    lines += [f"    correction: {c}" for c in trace.get("corrections", [])]
    if trace.get("slm_calls"):
        lines.append(f"    logic_slm calls: {trace['slm_calls']}")
    lines += [
        f"    gate {g['tool']}: {g['decision']} {g.get('reason', '')}".rstrip()
        for g in trace["gate"]
    ]
    if trace.get("checklist"):
        steps = " ".join(f"{k}:{v}" for k, v in trace["checklist"]["steps"].items())
        lines.append(f"    checklist (current {trace['checklist']['current']}): {steps}")
    slots = ", ".join(f"{n}={s['status']}:{s['value']}" for n, s in trace["slots"].items())
    lines.append(f"    phase {trace['phase']} · status {trace['status']} · slots: {slots or '-'}")
    return "\n".join(lines)


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())
