"""Run an agent's scenario through the REAL Pipecat pipeline in text mode.

Caller turns enter as transcripts; the LLM is a ``ScriptedLLM`` that makes the tool calls the
scenario lists for each turn and, when the turn's script runs out, relays the engine's
``<system_directive>`` (as an obedient model would); backend tools can be scripted too. Every
turn yields one trace dict (see ``docs/scenarios.md``).
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipecat_steward.agent.checkpointing import Checkpointer
from pipecat_steward.agent.conversation import TurnRecord
from pipecat_steward.agent.dispatch import ToolFn
from pipecat_steward.agent.loader import Agent, load_agent, load_yaml
from pipecat_steward.agent.transactions import TransactionSession
from pipecat_steward.core.procedures import Verdict
from pipecat_steward.core.slots import Action
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.script import Call, Say, Step
from pipecat_steward.testing.scripted_llm import ContextSnapshot, FunctionStep, ScriptedLLM

__all__ = [
    "Scenario",
    "ScenarioTurn",
    "check_expectations",
    "load_scenario",
    "run_scenario",
    "trace_turn",
]

_DIRECTIVE = re.compile(r"<system_directive>\n(.*?)\n</system_directive>", re.S)
_SPARE_STEPS = 12


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioCall(_Model):
    """A tool call the scripted LLM makes."""

    name: str
    args: dict[str, Any] = Field(default_factory=lambda: {})


class ScenarioInference(_Model):
    """One scripted inference: tool calls and/or text."""

    calls: list[ScenarioCall] = Field(default_factory=lambda: [])
    say: str | None = None


class ScenarioVerdict(_Model):
    """A judge verdict injected before a turn (the monitor's role; issue 7)."""

    satisfied: list[str] = Field(default_factory=lambda: [])
    not_applicable: list[str] = Field(default_factory=lambda: [])


class ScenarioTurn(_Model):
    """One caller turn and what the LLM does in it."""

    user: str
    variables: dict[str, Any] = Field(default_factory=lambda: {})
    verdict: ScenarioVerdict | None = None
    llm: list[ScenarioInference] = Field(default_factory=lambda: [])
    expect: dict[str, Any] = Field(default_factory=lambda: {})


class Scenario(_Model):
    """A scenario file (``pipecat eval``-shaped: ``name`` + scripted ``turns``)."""

    name: str
    description: str = ""
    seed: int = 0
    channel: str | None = None
    event_data: dict[str, Any] = Field(default_factory=lambda: {})
    backend: dict[str, list[dict[str, Any]]] = Field(default_factory=lambda: {})
    gate_timeout_s: float | None = None
    turns: list[ScenarioTurn]


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    return Scenario.model_validate(load_yaml(Path(path)))


def _directive(snapshot: ContextSnapshot) -> str:
    match = _DIRECTIVE.search(snapshot.system or "")
    return match.group(1).strip() if match else ""


def _step(inference: ScenarioInference) -> Step:
    items: list[Say | Call] = [Say(inference.say)] if inference.say else []
    return [*items, *(Call(c.name, c.args) for c in inference.calls)]


class _ScriptedModel:
    """The per-turn script queue behind the ScriptedLLM."""

    def __init__(self) -> None:
        self.queue: list[Step] = []

    def __call__(self, snapshot: ContextSnapshot) -> Step:
        if self.queue:
            return self.queue.pop(0)
        text = _directive(snapshot)
        return Say(text) if text else ()


def _backend(agent: Agent, scripted: Mapping[str, list[dict[str, Any]]]) -> Agent:
    tools: dict[str, ToolFn] = dict(agent.tools)
    for name, results in scripted.items():
        tools[name] = _replayer(name, list(results))
    return dataclasses.replace(agent, tools=tools)


def _replayer(name: str, results: list[dict[str, Any]]) -> ToolFn:
    def tool(**_: Any) -> dict[str, Any]:
        if not results:
            raise RuntimeError(f"scenario backend for {name!r} has no more results")
        return results.pop(0) if len(results) > 1 else dict(results[0])

    return tool


async def run_scenario(
    agent: Agent | str | Path,
    scenario: Scenario,
    *,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
    checkpointer: Checkpointer | None = None,
) -> list[dict[str, Any]]:
    """Play ``scenario`` through a real pipeline; return one trace dict per caller turn.

    With a ``checkpointer`` the session is restored by identity first and the turns already
    completed are skipped, so a killed run can be resumed by running it again.
    """
    loaded = agent if isinstance(agent, Agent) else load_agent(agent)
    loaded = _backend(loaded, scenario.backend)
    clock = _TurnClock()
    steward = Steward(
        loaded,
        rng=random.Random(scenario.seed),
        event_data=scenario.event_data,
        channel=scenario.channel,
        gate_timeout_s=scenario.gate_timeout_s,
        checkpointer=checkpointer,
        clock=clock,
    )
    await steward.start()
    model = _ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(_SPARE_STEPS)])
    steward.attach(llm)
    traces: list[dict[str, Any]] = []
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        for number, turn in enumerate(scenario.turns, 1):
            if number <= steward.session.turns_done:
                continue
            clock.turn = number
            _before_turn(steward, turn)
            model.queue = [_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(_SPARE_STEPS - llm.remaining))
            await pipeline.say(turn.user)
            await pipeline.settle()
            await steward.relay.bus.drain()
            steward.session.turns_done = number
            await steward.session.save()
            trace = trace_turn(number, steward, _turn_record(steward, turn.user))
            traces.append(trace)
            if on_turn:
                on_turn(trace)
    return traces


class _TurnClock:
    """A deterministic clock for evidence times: the scenario turn number."""

    turn = 0

    def __call__(self) -> str:
        return f"turn-{self.turn}"


def _before_turn(steward: Steward, turn: ScenarioTurn) -> None:
    """Host writes and injected verdicts that happen before the caller speaks."""
    session = steward.session
    if turn.variables:
        session.host_write(turn.variables)
    if turn.verdict is not None and session.supervisor is not None:
        verdict = Verdict(
            satisfied=tuple(turn.verdict.satisfied),
            not_applicable=tuple(turn.verdict.not_applicable),
        )
        session.host_write(session.supervisor.verdict(session.state.variables, verdict))


def _turn_record(steward: Steward, user: str) -> TurnRecord:
    turns = steward.session.turns
    return turns[-1] if turns and turns[-1].user == user else TurnRecord(user)


def trace_turn(number: int, steward: Steward, record: TurnRecord) -> dict[str, Any]:
    """The JSON trace of one caller turn."""
    state = steward.session.state
    actions = record.actions
    llm_actions = [a for a in actions if not a.preempt and not a.calls]
    return {
        "turn": number,
        "user": record.user,
        "visible_tools": sorted(actions[0].visible_tools) if actions else [],
        "llm_calls": [
            {"name": c.name, "args": dict(c.args), "outcome": c.outcome} for c in record.llm_calls
        ],
        "fired": [
            {
                "tool": c.name,
                "args": dict(c.args),
                "ok": c.outcome == "ok",
                "task": _task(steward, c.name),
            }
            for c in record.fired
        ],
        "bot": [{"text": u.text, "source": u.source} for u in record.bot],
        "phase": actions[-1].phase if actions else "collection",
        "asks": _asks(actions),
        "slots": {
            n: {"status": r.status, "value": r.value, "source": r.source}
            for n, r in state.slots.items()
            if r.status != "empty"
        },
        "status": state.status,
        "payloads": list(record.payloads),
        "gate": list(record.gates),
        "transaction": _transaction(steward),
        "checklist": _checklist(steward),
        "hints": [{"tag": h.tag, "text": h.text} for a in llm_actions for h in a.hints],
        "events": [
            {"tag": e.tag, "n": e.n, **{k: _json(v) for k, v in e.data.items()}}
            for e in record.events
        ],
    }


def _transaction(steward: Steward) -> dict[str, Any] | None:
    session = steward.session
    if not isinstance(session, TransactionSession):
        return None
    state = session.tstate
    txn = state.active_transaction or state.last_transaction
    if txn is None:
        return {
            "status": str(state.transaction_status),
            "intent": None,
            "missing": [],
            "arguments": {},
        }
    return {
        "intent": txn.intent,
        "status": str(state.transaction_status),
        "missing": list(state.missing_parameters),
        "arguments": dict(txn.arguments),
        "idempotency_key": txn.idempotency_key,
        "interrupted": [t.intent for t in state.interrupted],
    }


def _checklist(steward: Steward) -> dict[str, Any] | None:
    status = steward.session.checklist()
    if status is None:
        return None
    steps = {s["id"]: s["state"] for p in status["procedures"] for s in p["steps"]}
    return {"current": status["current_step"], "steps": steps}


def _asks(actions: Sequence[Action]) -> list[str]:
    """Slots the bot asked for: in its preempted messages and in the LLM's final reply."""
    spoken = [a for a in actions if a.preempt]
    spoken += [a for a in actions[-1:] if not a.preempt and not a.calls]
    return sorted({n for a in spoken for n in a.asks})


def _task(steward: Steward, tool: str) -> str | None:
    names = steward.agent.flow.executors.get(tool, ())
    return names[0] if names else None


def _json(value: object) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def check_expectations(trace: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    """Compare one turn's trace with the scenario's ``expect`` block; return the mismatches.

    Keys: ``bot`` (substrings that must appear in what the bot said, in order), ``bot_source``
    (the sources of the utterances), ``status``, ``phase``, ``asks``, ``fired`` (tool names),
    ``llm_calls`` (``name:outcome``), ``slots`` (name → status, or ``{status, value}``),
    ``visible`` / ``hidden`` (tool names that must / must not be visible at the turn's start).
    """
    said = " ".join(b["text"] for b in trace["bot"])
    problems: list[str] = []
    for key, want in expect.items():
        got = _expected_view(key, trace, said)
        if key == "bot":
            problems += [f"bot did not say {w!r}: {said!r}" for w in want if w not in said]
        elif key == "slots":
            problems += _slot_problems(trace["slots"], want)
        elif key == "transaction":
            got_txn = trace["transaction"] or {}
            problems += [
                f"transaction.{k}: expected {v!r}, got {got_txn.get(k)!r}"
                for k, v in want.items()
                if got_txn.get(k) != v
            ]
        elif key == "checklist":
            steps = (trace["checklist"] or {}).get("steps", {})
            problems += [
                f"step {k}: expected {v!r}, got {steps.get(k)!r}"
                for k, v in want.items()
                if steps.get(k) != v
            ]
        elif key in ("visible", "hidden"):
            wrong = [t for t in want if (t in trace["visible_tools"]) != (key == "visible")]
            problems += [f"{t} should be {key}" for t in wrong]
        elif got != want:
            problems.append(f"{key}: expected {want!r}, got {got!r}")
    return problems


def _expected_view(key: str, trace: Mapping[str, Any], said: str) -> Any:
    views: dict[str, Callable[[], Any]] = {
        "bot_source": lambda: [b["source"] for b in trace["bot"]],
        "fired": lambda: [f["tool"] for f in trace["fired"]],
        "llm_calls": lambda: [f"{c['name']}:{c['outcome']}" for c in trace["llm_calls"]],
        "gate": lambda: [f"{g['tool']}:{g['decision']}" for g in trace["gate"]],
    }
    return views[key]() if key in views else trace.get(key)


def _slot_problems(slots: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for name, expected in want.items():
        got = slots.get(name, {"status": "empty", "value": None})
        spec = expected if isinstance(expected, dict) else {"status": expected}
        for field, value in spec.items():
            if got.get(field) != value:
                problems.append(f"slot {name}.{field}: expected {value!r}, got {got.get(field)!r}")
    return problems
