"""Scenarios: the file format, scripted backends, per-turn traces and expectations.

Framework-free: the Pipecat simulation (``simulate.py``) and the direct player (``direct.py``)
both build on it. The format is documented in ``docs/scenarios.md``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from pipecat_steward.agent.dispatch import ToolFn
from pipecat_steward.agent.loader import Agent, load_yaml
from pipecat_steward.agent.records import TurnRecord
from pipecat_steward.agent.session import StewardSession
from pipecat_steward.agent.transactions import TransactionSession
from pipecat_steward.core.procedures import Verdict
from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.core.slots import Action

__all__ = [
    "Scenario",
    "ScenarioCall",
    "ScenarioInference",
    "ScenarioTurn",
    "ScenarioVerdict",
    "TurnClock",
    "before_turn",
    "resume_point",
    "check_expectations",
    "load_scenario",
    "scripted_backend",
    "trace_turn",
    "heard_record",
    "turn_record",
]


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


SLMBehaviour = Literal["truth", "lie", "garbage", "stall", "fail"]
"""How the scripted logic_slm of ``steward simulate --monitor`` answers (scenario default, or
per turn): from the scenario's truth; ``lie`` (every asked requirement satisfied, extraction
invents values); ``garbage`` (non-JSON text); ``stall`` (no answer before any timeout);
``fail`` (HTTP 500)."""


class ScenarioTurn(_Model):
    """One caller turn and what the LLM does in it."""

    user: str
    variables: dict[str, Any] = Field(default_factory=lambda: {})
    verdict: ScenarioVerdict | None = None
    slm: SLMBehaviour | None = None
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
    slm: SLMBehaviour = "truth"
    turns: list[ScenarioTurn]


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    return Scenario.model_validate(load_yaml(Path(path)))


def scripted_backend(agent: Agent, scripted: Mapping[str, list[dict[str, Any]]]) -> Agent:
    """The agent with the scenario's scripted backend results in place of its tools."""
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


class TurnClock:
    """A deterministic clock for evidence times: the scenario turn number."""

    turn = 0

    def __call__(self) -> str:
        return f"turn-{self.turn}"


def resume_point(session: StewardSession, scenario: Scenario) -> int:
    """How many of ``scenario``'s turns a restored session already played.

    A session restored from a checkpoint skips the turns it finished of the same scenario; a
    different scenario (the second half of a call) starts at its first turn with the restored
    state.
    """
    done = session.turns_done if session.script == scenario.name else 0
    session.script = scenario.name
    return done


def before_turn(session: StewardSession, turn: ScenarioTurn) -> None:
    """Host writes and injected verdicts that happen before the caller speaks."""
    if turn.variables:
        session.host_write(turn.variables)
    if turn.verdict is not None and session.supervisor is not None:
        verdict = Verdict(
            satisfied=tuple(turn.verdict.satisfied),
            not_applicable=tuple(turn.verdict.not_applicable),
        )
        session.host_write(session.supervisor.verdict(session.state.variables, verdict))


def turn_record(session: StewardSession, user: str) -> TurnRecord:
    """The session's record of the caller turn that said ``user`` (an empty one if none)."""
    return heard_record(session, user) or TurnRecord(session.secrets.redact(user))


def heard_record(session: StewardSession, user: str) -> TurnRecord | None:
    """The latest turn record when it is the caller turn that said ``user`` (records redact)."""
    turns = session.turns
    if turns and (turns[-1].user == user or (session.heard == user and turns[-1].user)):
        return turns[-1]
    return None


class HasSession(Protocol):
    """Anything that carries a steward session (a ``Steward``, an S2S steward)."""

    @property
    def session(self) -> StewardSession: ...


def trace_turn(
    number: int, session: StewardSession | HasSession, record: TurnRecord
) -> dict[str, Any]:
    """The JSON trace of one caller turn."""
    if not isinstance(session, StewardSession):
        session = session.session
    return redact_tree(_trace(number, session, record), session.secrets.redact)


def _trace(number: int, session: StewardSession, record: TurnRecord) -> dict[str, Any]:
    state = session.state
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
                "task": _task(session, c.name),
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
        "transaction": _transaction(session),
        "checklist": _checklist(session),
        "slm_calls": 0,
        "corrections": [],
        "extracted": {},
        "hints": [{"tag": h.tag, "text": h.text} for a in llm_actions for h in a.hints],
        "events": [
            {"tag": e.tag, "n": e.n, **{k: _json(v) for k, v in e.data.items()}}
            for e in record.events
        ],
    }


def _transaction(session: StewardSession) -> dict[str, Any] | None:
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


def _checklist(session: StewardSession) -> dict[str, Any] | None:
    status = session.checklist()
    if status is None:
        return None
    steps = {s["id"]: s["state"] for p in status["procedures"] for s in p["steps"]}
    return {"current": status["current_step"], "steps": steps}


def _asks(actions: Sequence[Action]) -> list[str]:
    """Slots the bot asked for: in its preempted messages and in the LLM's final reply."""
    spoken = [a for a in actions if a.preempt]
    spoken += [a for a in actions[-1:] if not a.preempt and not a.calls]
    return sorted({n for a in spoken for n in a.asks})


def _task(session: StewardSession, tool: str) -> str | None:
    names = session.agent.flow.executors.get(tool, ())
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
