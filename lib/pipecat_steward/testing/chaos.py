"""Chaos conversations: a seeded caller and model, faults, and the record the invariants read.

``generate`` plays one seeded conversation through the direct driver (the engine's real loop
without Pipecat): the ``ChaosCaller`` answers what the bot asked, the ``ChaosModel`` answers
every inference, the agent's executors fail or raise at random (``backend`` entries of the
scenario), the checkpoint store may be slow, and a canary sits in a sensitive variable. What was
played is recorded into a ``Scenario`` (the format of ``docs/scenarios.md``), so ``play``
replays it exactly, the pipeline can play it too, and the shrinker can cut it down.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipecat_steward.agent.loader import Agent
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.dispatch import ToolFn
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.storage.checkpoints.contract import Identity, PayloadKind, decode_payload
from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore
from pipecat_steward.testing.chaos_actors import ChaosCaller, ChaosHost, ChaosModel
from pipecat_steward.testing.chaos_surface import AgentSurface, procedure_steps, surface_of
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioTurn,
    ScenarioVerdict,
    scripted_backend,
)

__all__ = [
    "DELAY_KEY",
    "PlayedConversation",
    "SlowStore",
    "faulted",
    "generate",
    "play",
    "session_for",
    "surface_for",
    "without_delays",
]

TURN_BOUND_S = 5.0
"""A caller turn that takes longer than this has hung (the direct driver needs milliseconds)."""

DEADLINE_S = 0.5
"""The deadline of every agent function in a chaos run (a scenario's ``task_timeout_s`` wins):
the several calls one turn may make to a stalled backend stay within ``TURN_BOUND_S``."""


@dataclass
class PlayedConversation:
    """One played conversation and everything the invariants read.

    Attributes:
        scenario: What was played (replayable).
        traces: One trace per completed caller turn.
        payloads: The checkpoint saved after each completed turn.
        seconds: How long each completed turn took.
        backend: Every invocation of an irreversible tool: ``(tool, args, result)``.
        invoked: The caller turn (1-based) and the tool of each of those invocations.
        logs: Log lines emitted while it ran.
        error: The exception that escaped the driver, or ``"timeout"``; None when none did.
        canary: The sensitive value planted in the conversation.
    """

    scenario: Scenario
    traces: list[dict[str, Any]] = field(default_factory=lambda: [])
    payloads: list[dict[str, Any]] = field(default_factory=lambda: [])
    seconds: list[float] = field(default_factory=lambda: [])
    backend: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=lambda: [])
    invoked: list[tuple[int, str]] = field(default_factory=lambda: [])
    logs: list[str] = field(default_factory=lambda: [])
    error: str | None = None
    canary: str = ""


class SlowStore(MemoryCheckpointStore):
    """A memory checkpoint store whose saves yield to the loop first (a slow network store)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.last: dict[str, Any] = {}

    async def _write(
        self, identity: Identity, kind: PayloadKind, data: bytes, expected: int, ttl: float | None
    ) -> int:
        await asyncio.sleep(self.delay_s)
        version = await super()._write(identity, kind, data, expected, ttl)
        self.last = dict(cast(Mapping[str, Any], decode_payload(kind, data)))
        return version


def session_for(agent: Agent) -> StewardSession:
    """A fresh session of the kind the players build for ``agent``."""
    return open_session(agent)


def surface_for(agent: Agent) -> AgentSurface:
    """The agent's chaos surface, with the session's own tool schemas."""
    return surface_of(agent, session_for(agent).tool_specs())


def canary_for(seed: int) -> str:
    """A sensitive value no bot would produce by itself."""
    return f"4929{seed:08d}7731"


def _faults(
    rng: random.Random, agent: Agent, surface: AgentSurface
) -> dict[str, list[dict[str, Any]]]:
    """Executors that fail or raise: scripted backend results (an empty list raises)."""
    executors = set(agent.flow.executors) | set(surface.irreversible) | set(agent.llm_tools)
    backend: dict[str, list[dict[str, Any]]] = {}
    for tool in sorted(t for t in executors if t in agent.tools):
        roll = rng.random()
        if roll < 0.12:
            backend[tool] = [{"success": False, "error": True, "reason": "chaos fault"}]
        elif roll < 0.2:
            backend[tool] = []
    return backend


def _host(rng: random.Random, agent: Agent) -> ChaosHost:
    linked = {v.name: (str(v.type), tuple(v.values)) for v in agent.variables if v.linked}
    steps = [str(s["id"]) for s in procedure_steps(agent.raw) if "id" in s]
    return ChaosHost(rng, linked, steps)


def _turn(host: ChaosHost, user: str) -> ScenarioTurn:
    verdict = host.verdict()
    return ScenarioTurn(
        user=user,
        variables=host.writes(),
        verdict=ScenarioVerdict(satisfied=verdict[0], not_applicable=verdict[1])
        if verdict
        else None,
    )


DELAY_KEY = "chaos_delay_s"
"""A scenario backend entry ``[{chaos_delay_s: X}]``: the real tool answers, X seconds late."""


def _delays(
    rng: random.Random, agent: Agent, surface: AgentSurface
) -> dict[str, list[dict[str, Any]]]:
    """Rarely, one executor that answers late (a stall past the turn bound, or barely late)."""
    names = set(agent.flow.executors) | set(agent.llm_tools) | set(surface.irreversible)
    executors = sorted(t for t in names if t in agent.tools)
    if not executors or rng.random() > 0.01:
        return {}
    late = rng.choice([0.05, TURN_BOUND_S + 1.0]) if rng.random() < 0.5 else 0.05
    return {rng.choice(executors): [{DELAY_KEY: late}]}


def without_delays(scenario: Scenario) -> Scenario:
    """``scenario`` with its late executors answering on time (for players that cannot delay)."""
    backend = {t: r for t, r in scenario.backend.items() if not (r and DELAY_KEY in r[0])}
    return scenario.model_copy(update={"backend": backend})


def faulted(agent: Agent, scenario: Scenario) -> tuple[Agent, Scenario]:
    """``agent`` and ``scenario`` as every replay plays them: late tools late, under the deadline.

    A resumed or pipeline replay of a conversation must meet the same stalled backend the
    conversation met, or a call the deadline cut off there succeeds here.
    """
    timely = without_delays(scenario)
    deadline_s = scenario.task_timeout_s or DEADLINE_S
    return _delayed(agent, scenario), timely.model_copy(update={"task_timeout_s": deadline_s})


def _delayed(agent: Agent, scenario: Scenario) -> Agent:
    tools: dict[str, ToolFn] = dict(agent.tools)
    for name, results in scenario.backend.items():
        if results and DELAY_KEY in results[0] and name in tools:
            tools[name] = _late(tools[name], float(results[0][DELAY_KEY]))
    return dataclasses.replace(agent, tools=tools)


def _late(fn: ToolFn, seconds: float) -> ToolFn:
    @functools.wraps(fn)  # the same signature: arguments are checked as on the other paths
    async def tool(**args: Any) -> Any:
        await asyncio.sleep(seconds)
        result: Any = fn(**args)
        return await result if inspect.isawaitable(result) else result

    return cast(ToolFn, functools.update_wrapper(tool, fn))


async def generate(
    agent: Agent, seed: int, *, max_turns: int = 12, arg_faults: bool = True
) -> PlayedConversation:
    """Play the seeded chaos conversation ``seed`` against ``agent`` (see ``chaos_agent``).

    Without ``arg_faults`` the model's arguments are always well-formed (to reach states past a
    crash on malformed arguments).
    """
    rng = random.Random(seed)
    surface = surface_for(agent)
    caller = ChaosCaller(rng)
    canary = canary_for(seed)
    first = ScenarioTurn(user=caller.say(), variables=dict.fromkeys(surface.sensitive, canary))
    scenario = Scenario(
        name=f"chaos_{agent.name}_{seed}",
        description=f"chaos conversation, seed {seed}",
        seed=seed,
        backend={
            **_delays(random.Random(f"delay-{seed}"), agent, surface),
            **_faults(rng, agent, surface),
        },
        turns=[first],
    )
    model = ChaosModel(random.Random(rng.random()), surface, arg_faults=arg_faults)

    host = _host(rng, agent)

    def more(trace: Mapping[str, Any]) -> None:
        # A procedure's conversation goes on after its flow is complete.
        live = trace["status"] == "in_progress" or (
            trace["status"] == "complete" and agent.procedures is not None
        )
        if len(scenario.turns) < max_turns and live:
            scenario.turns.append(_turn(host, caller.say(trace["asks"])))

    slow = rng.random() < 0.2
    return await play(agent, scenario, model=model, on_trace=more, slow=slow, canary=canary)


async def play(
    agent: Agent,
    scenario: Scenario,
    *,
    model: ChaosModel | None = None,
    on_trace: Callable[[dict[str, Any]], None] | None = None,
    slow: bool = False,
    canary: str = "",
) -> PlayedConversation:
    """Play ``scenario`` through the direct driver and record what the invariants read."""
    conversation = PlayedConversation(scenario, canary=canary or canary_for(scenario.seed))
    surface = surface_for(agent)
    timely = without_delays(scenario).backend
    backed = _recorded(scripted_backend(_delayed(agent, scenario), timely), surface, conversation)
    store = SlowStore(0.001 if slow else 0.0)
    identity = Identity("chaos", agent.name, scenario.name)
    plain = scenario.model_copy(
        update={"backend": {}, "task_timeout_s": scenario.task_timeout_s or DEADLINE_S}
    )
    plain.turns = scenario.turns  # the same list: turns the caller appends are played

    clock = [time.perf_counter()]

    def on_turn(trace: dict[str, Any]) -> None:
        now = time.perf_counter()
        conversation.seconds.append(now - clock[0])
        conversation.traces.append(trace)
        conversation.payloads.append(copy.deepcopy(store.last))
        if on_trace is not None:
            on_trace(trace)
        clock[0] = time.perf_counter()  # the caller's next turn starts now

    with _captured_logs(conversation.logs):
        try:
            async with asyncio.timeout(TURN_BOUND_S * (len(scenario.turns) + 12)):
                await run_scenario_direct(
                    backed,
                    plain,
                    on_turn=on_turn,
                    checkpointer=Checkpointer(store, identity),
                    model=model,
                )
        except TimeoutError:
            conversation.error = "timeout"
        except Exception as exc:  # the invariant: nothing may escape the driver
            conversation.error = f"{type(exc).__name__}: {exc}"
    return conversation


def _recorded(agent: Agent, surface: AgentSurface, conversation: PlayedConversation) -> Agent:
    """Record every invocation of an irreversible tool (the backend's own record)."""
    tools: dict[str, ToolFn] = dict(agent.tools)
    for name in surface.irreversible:
        if name in tools:
            tools[name] = _recorder(name, tools[name], conversation)
    return dataclasses.replace(agent, tools=tools)


def _recorder(name: str, fn: ToolFn, conversation: PlayedConversation) -> ToolFn:
    def log(args: dict[str, Any], result: Any) -> Any:
        conversation.backend.append((name, args, dict(result)))
        return result

    async def later(args: dict[str, Any], pending: Any) -> Any:
        return log(args, await pending)

    @functools.wraps(fn)  # the same signature: arguments are checked as on the other paths
    def tool(**args: Any) -> Any:
        conversation.invoked.append((len(conversation.traces) + 1, name))
        result: Any = fn(**args)
        return later(args, result) if inspect.isawaitable(result) else log(args, result)

    # A wrapper takes what the tool takes: the argument check must see the same signature.
    return cast(ToolFn, functools.update_wrapper(tool, fn))


class _ListHandler(logging.Handler):
    def __init__(self, sink: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(record.getMessage())


class _captured_logs:
    def __init__(self, sink: list[str]) -> None:
        self.handler = _ListHandler(sink)
        self.root = logging.getLogger()
        self.level = self.root.level

    def __enter__(self) -> None:
        self.root.addHandler(self.handler)
        self.root.setLevel(logging.DEBUG)

    def __exit__(self, *_: object) -> None:
        self.root.removeHandler(self.handler)
        self.root.setLevel(self.level)
