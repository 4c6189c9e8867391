"""A bot worker process for the multi-worker tests: one process serving several order-desk calls.

Run as ``python -m tests.storage_support.worker REDIS_URL``. A dispatcher assigns calls on
stdin, one command a line:

- ``run SESSION`` drives the call ``local/order_desk/SESSION`` (scenario ``long_session``)
  with the direct driver and a Redis ``Checkpointer`` by identity: a call another worker started
  is restored and resumed where its checkpoint left it. Calls run concurrently. Each call's
  conversation events go to the same Redis (``RedisEventStore``) through the worker's
  ``EventHub``, as a deployment's studio reads them.
- ``run SESSION PAUSE`` also stops this whole process (SIGSTOP on itself) right after turn
  ``PAUSE`` is checkpointed: a worker frozen at a known point (a long GC pause, a partition).
- ``quit`` exits once every call has ended.

It reports on stdout, one JSON object a line: ``ready``; ``exec`` when an executor is entered
(session, tool, arguments with the idempotency key); ``turn`` after each checkpointed turn
(session, turn, version); ``conflict`` when another worker took a call over (the listener then
ends that call by cancelling its task, as an app ends its pipeline); ``done`` / ``stopped``
when a call ends (session, writer token, version, store writes, events emitted and whether the
event store refused this worker's events: ``fenced``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.events import EventHub
from pipecat_steward.events.redis_store import RedisEventStore
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.dispatch import ToolFn
from pipecat_steward.storage.checkpoints import CheckpointStore, Identity, open_store
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import Scenario, load_scenario

AGENT = Path(__file__).resolve().parents[2] / "bots" / "order_desk"
SCENARIO = AGENT / "scenarios" / "long_session.yaml"
_OUT = threading.Lock()


def emit(event: str, **data: Any) -> None:
    """One report line (executors run in threads, so writes are serialised)."""
    with _OUT:
        sys.stdout.write(json.dumps({"event": event, **data}) + "\n")
        sys.stdout.flush()


def reporting(agent: Agent, session: str) -> Agent:
    """The agent whose executors report ``exec`` before they act."""

    def wrap(name: str, fn: ToolFn) -> ToolFn:
        @functools.wraps(fn)
        def tool(**args: Any) -> Any:
            if "idempotency_key" in args:
                emit("exec", session=session, tool=name, args=args)
            return fn(**args)

        return tool

    return dataclasses.replace(agent, tools={n: wrap(n, f) for n, f in agent.tools.items()})


async def drive(
    store: CheckpointStore, hub: EventHub, scenario: Scenario, session: str, pause: int
) -> None:
    """Drive one call to its end, or until another worker takes it over."""
    checkpointer = Checkpointer(store, Identity("local", "order_desk", session))
    events = await hub.open(session)
    task = asyncio.current_task()

    def on_turn(trace: dict[str, Any]) -> None:
        emit("turn", session=session, turn=trace["turn"], version=checkpointer.version)
        if trace["turn"] == pause:
            os.kill(os.getpid(), signal.SIGSTOP)

    def on_conflict(message: dict[str, Any]) -> None:
        emit("conflict", session=session, message=message)
        if task is not None:
            task.cancel()  # end this call here: the worker that owns it now drives it

    end = "done"
    try:
        await run_scenario_direct(
            reporting(load_agent(AGENT), session),
            scenario,
            on_turn=on_turn,
            checkpointer=checkpointer,
            on_conflict=on_conflict,
            events=events,
        )
    except asyncio.CancelledError:
        end = "stopped"
    await events.aclose(end)
    emit(
        end,
        session=session,
        writer=checkpointer.writer,
        version=checkpointer.version,
        saves=checkpointer.saves,
        emitted=events.emitted,
        fenced=getattr(events, "fenced", None),
    )


async def serve(url: str) -> None:
    store, scenario = open_store(url), load_scenario(SCENARIO)
    hub = EventHub(RedisEventStore(url))
    reader = ThreadPoolExecutor(1)
    calls: list[asyncio.Task[None]] = []
    emit("ready", pid=os.getpid())
    loop = asyncio.get_running_loop()
    while line := (await loop.run_in_executor(reader, sys.stdin.readline)).split():
        if line[0] == "quit":
            break
        pause = int(line[2]) if len(line) > 2 else 0
        calls.append(asyncio.create_task(drive(store, hub, scenario, line[1], pause)))
    await asyncio.gather(*calls)
    await store.close()
    await hub.store.close()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
