"""``steward studio AGENT``: watch a call live, or review one afterwards, in the browser.

- ``--replay SESSION|TRACE_FILE``: step through a stored session or a ``steward simulate
  --json`` trace; no keys, no network;
- ``--text``: chat with the agent through the real pipeline and any OpenAI-compatible LLM
  (``STEWARD_LLM_BASE_URL``, ``STEWARD_LLM_MODEL``; else ``OPENAI_API_KEY``), no speech keys;
- neither: a voice call over SmallWebRTC with pipecat's prebuilt client beside the panels
  (what ``steward rehearse`` serves; cloud speech keys as it names them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.cli.arguments import PORT, seconds
from pipecat_steward.exceptions import StewardError

__all__ = ["add_parser", "run"]

LLM_VARIABLES = ("STEWARD_LLM_BASE_URL", "OPENAI_API_KEY")


def add_parser(sub: Any) -> None:
    """Register ``steward studio``."""
    parser = sub.add_parser(
        "studio", help="watch a call live (text or voice) or replay one, in the browser"
    )
    parser.add_argument("agent", type=Path, help="agent folder (agent.yaml + tools.py)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--replay", metavar="SESSION|TRACE_FILE", help="review a recorded call")
    mode.add_argument("--text", action="store_true", help="chat in text with the real pipeline")
    parser.add_argument("--store", help="event store: sqlite:PATH | redis://HOST:PORT/DB")
    parser.add_argument("--host", default="localhost", help="address to serve on")
    parser.add_argument("--port", type=PORT, default=7860, help="port to serve on")
    parser.add_argument(
        "--turn-timeout",
        type=seconds(),
        default=300.0,
        metavar="SECONDS",
        help="--text: how long one bot turn may take (a self-hosted model can be slow)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the agent and the mode's settings, then serve the studio until stopped."""
    from pipecat_steward.cli.rehearse import agent_loads

    if not agent_loads(args.agent, "steward studio"):
        return 2
    if args.replay:
        problem = _replay_problem(args.replay, args.store)
        if problem:
            print(f"steward studio: {problem}", file=sys.stderr)
            return 2
    if not args.replay and not args.text:
        from pipecat_steward.cli.rehearse import run as rehearse

        return rehearse(args)
    if args.text and not any(os.environ.get(n) for n in LLM_VARIABLES):
        print(
            "steward studio --text: no LLM is configured; set STEWARD_LLM_BASE_URL (an "
            "OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1, with STEWARD_LLM_MODEL) "
            "or OPENAI_API_KEY",
            file=sys.stderr,
        )
        return 2
    return _serve(args)


def _replay_problem(replay: str, store: str | None) -> str | None:
    """Why ``--replay`` cannot be served (None when it can): a trace file is read whole first."""
    if not Path(replay).is_file():
        return _stored_session_problem(replay, store)
    from pipecat_steward.studio.trace_format import TraceFileError, read_traces

    try:
        read_traces(Path(replay))
    except TraceFileError as exc:
        return str(exc)
    return None


def _stored_session_problem(session: str, store: str | None) -> str | None:
    """Why ``--replay SESSION`` cannot be served from ``store`` (None when it can)."""
    import asyncio

    from pipecat_steward.events.store import open_event_store

    if not store:
        return (
            f"{session} is not a trace file; a stored session needs --store URL (the store it "
            "was recorded in: sqlite:PATH or redis://HOST:PORT/DB)"
        )

    async def stored() -> bool:
        events = open_event_store(store)
        try:
            return bool(await events.read(session))
        finally:
            await events.close()

    try:
        found = asyncio.run(stored())
    except (StewardError, OSError) as exc:
        return f"cannot read the store {store}: {exc}"
    return None if found else f"no session {session!r} in {store} (and no such trace file)"


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from pipecat_steward.cli.simulate import quiet_pipecat
    from pipecat_steward.studio import StudioConfig, create_app

    mode = "text" if args.text else "replay"
    config = StudioConfig(
        args.agent.resolve(),
        mode=mode,
        replay=args.replay,
        store=args.store,
        env=dict(os.environ),
        turn_timeout=args.turn_timeout,
    )
    try:
        app = create_app(config)
    except (StewardError, ValueError, OSError) as exc:
        print(f"steward studio: {exc}", file=sys.stderr)
        return 2
    quiet_pipecat()
    print(f"steward studio: open http://{args.host}:{args.port}/", flush=True)
    # An open page keeps its WebSocket; Ctrl-C must still stop the studio promptly.
    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level="warning", timeout_graceful_shutdown=3
    )
    _serve_until_stopped(uvicorn.Server(config))
    return 0


def _serve_until_stopped(server: Any) -> None:
    """Serve until Ctrl-C, then leave: work a call left behind is cancelled, not awaited.

    ``asyncio.run`` (what ``uvicorn.run`` uses) waits for every task to honour its cancellation,
    and a pipeline still streaming a slow model's answer may not, which would hang the exit.
    """
    import asyncio
    import contextlib

    loop = asyncio.new_event_loop()
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how the studio stops
            loop.run_until_complete(server.serve())
        leftovers = asyncio.all_tasks(loop)
        for task in leftovers:
            task.cancel()
        if leftovers:
            loop.run_until_complete(asyncio.wait(leftovers, timeout=2))
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
