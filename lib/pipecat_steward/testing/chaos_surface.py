"""What a chaos run reads from a loaded agent: its tools, their arguments and its irreversible acts.

Nothing here knows a particular bot: setters and their fields come from the flow, the model's
own tools from their signatures, transaction tools from the session's schemas, and the acts
that must never run unconfirmed from the flow's terminal / read-back tasks, the intents'
executors and the procedures' irreversible steps.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from pipecat_steward.agent.loader import Agent, as_agent
from pipecat_steward.core.variables import VariableSpec

__all__ = [
    "CANARY_VARIABLE",
    "STEWARD_TOOLS",
    "AgentSurface",
    "Irreversible",
    "chaos_agent",
    "procedure_steps",
    "surface_of",
]

CANARY_VARIABLE = "chaos_secret"
"""A sensitive variable the chaos run adds when the agent declares none, to carry a canary."""

STEWARD_TOOLS: dict[str, dict[str, str]] = {
    "confirm_pending": {},
    "reject_pending": {},
    "correct_slot": {"slot": "slot", "value": "string"},
    "decline_slot": {"slot": "slot"},
}
"""The flow's confirmation, correction and decline tools, with their argument types."""

Kind = Literal["task", "intent", "procedure"]


@dataclass(frozen=True, slots=True)
class Irreversible:
    """An act that must not run before its inputs were read back and confirmed.

    Attributes:
        tool: The backend tool that performs it.
        kind: ``task`` (a terminal or read-back flow task), ``intent`` (a transaction's
            executor) or ``procedure`` (a tool an irreversible procedure step completes with).
        inputs: The slot or parameter names whose values it acts on.
    """

    tool: str
    kind: Kind
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AgentSurface:
    """The callable surface of an agent and its irreversible acts.

    Attributes:
        tools: Tool name → argument name → type (``string``, ``integer``, ``number``,
            ``boolean``, ``date`` or ``slot`` for a slot name).
        irreversible: Tool name → its irreversible act.
        slots: The caller-fillable slot names.
        clears: Task tool → slots its failure clears (an authored, legitimate reset).
        sensitive: Names of the sensitive variables.
        own: The agent's own tools (always offered to the model).
    """

    tools: Mapping[str, Mapping[str, str]]
    irreversible: Mapping[str, Irreversible]
    slots: tuple[str, ...] = ()
    clears: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {})
    sensitive: tuple[str, ...] = ()
    own: tuple[str, ...] = ()


def chaos_agent(agent: Agent | str | Path) -> Agent:
    """The agent with a sensitive variable to carry a canary when it declares none."""
    loaded = as_agent(agent)
    if any(v.sensitive for v in loaded.variables):
        return loaded
    spec = VariableSpec(name=CANARY_VARIABLE, sensitive=True, description="")
    return dataclasses.replace(loaded, variables=(*loaded.variables, spec))


def surface_of(
    agent: Agent, extra: Mapping[str, tuple[str, dict[str, Any], list[str]]]
) -> AgentSurface:
    """Read the surface of ``agent``; ``extra`` is the session's own tool schemas."""
    flow = agent.flow
    tools: dict[str, dict[str, str]] = {}
    for setter, members in flow.setters.items():
        if setter in agent.tools:  # the model sees the validator's own signature
            tools[setter] = _signature(agent.tools[setter])
            continue
        tools[setter] = {
            (fld or slot): str(flow.slot[slot].config.type or "string") for fld, slot in members
        }
    if flow.slots:
        tools.update(STEWARD_TOOLS)
    for name in agent.llm_tools:
        tools[name] = _signature(agent.tools[name])
    for name, (_, props, _) in extra.items():
        tools[name] = {
            p: str(cast(Mapping[str, Any], s).get("type", "string")) for p, s in props.items()
        }
    acts = _irreversible(agent)
    for act in acts.values():
        tools.setdefault(
            act.tool, _signature(agent.tools[act.tool]) if act.tool in agent.tools else {}
        )
    clears = {t.config.tool: tuple(t.config.on_failure.clear_slots) for t in flow.tasks}
    return AgentSurface(
        tools,
        acts,
        tuple(flow.user_slots),
        clears,
        tuple(v.name for v in agent.variables if v.sensitive),
        tuple(agent.llm_tools),
    )


def _signature(fn: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        text = str(param.annotation)
        out[param.name] = next((t for key, t in _PY_TYPES.items() if key in text), "string")
    return out


_PY_TYPES = {"int": "integer", "float": "number", "bool": "boolean"}


def _irreversible(agent: Agent) -> dict[str, Irreversible]:
    acts: dict[str, Irreversible] = {}
    for task in agent.flow.tasks:
        config = task.config
        if config.terminal or config.readback_inputs:
            acts[config.tool] = Irreversible(config.tool, "task", tuple(config.inputs))
    for intent in cast(list[Mapping[str, Any]], agent.raw.get("intents") or []):
        tool = str(intent.get("executor", ""))
        if tool:
            acts[tool] = Irreversible(tool, "intent", tuple(intent.get("required") or ()))
    for step in procedure_steps(agent.raw):
        done = cast(Mapping[str, Any], step.get("complete_when") or {})
        if step.get("irreversible") and done.get("tool"):
            acts[str(done["tool"])] = Irreversible(str(done["tool"]), "procedure")
    return acts


def procedure_steps(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The step settings of the main procedure and of every topic's."""
    bodies = [raw.get("procedure") or {}]
    topics = cast(Mapping[str, Any], raw.get("procedures") or {})
    bodies += [cast(Mapping[str, Any], t).get("procedure") or {} for t in topics.values()]
    steps: list[Mapping[str, Any]] = []
    for body in bodies:
        steps += cast(list[Mapping[str, Any]], cast(Mapping[str, Any], body).get("steps") or [])
    return steps
