"""Checks ``steward validate`` runs after loading: what the runtime would only find in a call.

Every tool an agent names must exist in ``tools.py`` (with a did-you-mean); every template
placeholder must be something the runtime can fill; every task-sourced slot must be filled by
some task output; tasks must not wait on each other in a loop; a step's ``expects`` and an
``available_when`` must name known variables; variables are declared once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from typing import cast

from pipecat_steward.agent.config import AgentConfig, IntentConfig
from pipecat_steward.agent.literals import Typed, impossible_comparisons
from pipecat_steward.agent.loader import Inspection, error, procedure_sources
from pipecat_steward.core.expressions import parse_condition
from pipecat_steward.core.procedures import Issue, compile_procedures
from pipecat_steward.core.slots.config import FlowConfig, OnExhaust, ThenCall
from pipecat_steward.core.slots.sources import TaskSource
from pipecat_steward.exceptions import ConfigError

__all__ = ["crosscheck"]

_BRACES = re.compile(r"\{([^{}]*)\}")
_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def crosscheck(found: Inspection) -> list[Issue]:
    """Every cross-check error of a loaded (or partly loaded) agent folder."""
    cfg = found.config
    issues = list(_tool_refs(cfg, found.tool_names))
    issues += _intent_templates(cfg.intents or [])
    if cfg.flow is not None:
        issues += _flow_templates(cfg.flow)
        issues += _task_outputs(cfg.flow)
        issues += _task_cycles(cfg.flow)
    issues += _duplicate_variables(cfg)
    issues += _duplicate_steps(cfg)
    issues += _known_names(cfg)
    issues += _comparisons(cfg)
    return issues


def _tool_refs(cfg: AgentConfig, tools: frozenset[str] | None) -> Iterator[Issue]:
    for path, name in _named_tools(cfg):
        if tools is not None and name in tools:
            continue
        yield error(path, _missing_tool(name, tools), "unknown_tool")


def _missing_tool(name: str, tools: frozenset[str] | None) -> str:
    if tools is None:
        return f"tool {name!r} is not defined: this folder has no tools.py; define it there"
    close = difflib.get_close_matches(name, sorted(tools), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else f"; define `def {name}(...)` there"
    return f"tool {name!r} is not defined in tools.py{hint}"


def _named_tools(cfg: AgentConfig) -> Iterator[tuple[str, str]]:
    if cfg.flow is not None:
        yield from _flow_tools(cfg.flow)
    for i, intent in enumerate(cfg.intents or []):
        yield f"intents[{i}].executor", intent.executor
        if intent.pre_validation:
            yield f"intents[{i}].pre_validation", intent.pre_validation


def _flow_tools(flow: FlowConfig) -> Iterator[tuple[str, str]]:
    for i, slot in enumerate(flow.slots):
        if slot.setter:
            yield f"flow.slots[{i}].setter", slot.setter
        yield from _then(f"flow.slots[{i}].validation.on_exhaust", slot.validation.on_exhaust)
    for i, task in enumerate(flow.tasks):
        yield f"flow.tasks[{i}].tool", task.tool
        yield from _then(f"flow.tasks[{i}].on_failure.on_exhaust", task.on_failure.on_exhaust)
        declined = task.on_input_declined
        yield from _then(f"flow.tasks[{i}].on_input_declined", OnExhaust(then=declined.then))
    yield from _then("flow.steer_back.on_exhaust", flow.steer_back.on_exhaust)


def _then(path: str, exhaust: OnExhaust) -> Iterator[tuple[str, str]]:
    if isinstance(exhaust.then, ThenCall):
        yield f"{path}.then.tool", exhaust.then.tool
    elif exhaust.then:
        yield f"{path}.then", exhaust.then


def _intent_templates(intents: Iterable[IntentConfig]) -> Iterator[Issue]:
    for i, intent in enumerate(intents):
        asked = {p: f"intents[{i}].ask.{p}" for p in intent.ask}
        for param, path in asked.items():
            yield from _placeholders(path, intent.ask[param], intent.required)
            if param not in intent.required:
                yield error(path, f"{param!r} is not a required parameter of {intent.name!r}")
        yield from _placeholders(f"intents[{i}].confirmation", intent.confirmation, intent.required)
        spoken = [*intent.required, *intent.outputs]
        for key in ("done_say", "failed_say", "out_of_scope_say"):
            yield from _placeholders(f"intents[{i}].{key}", getattr(intent, key), spoken)


def _placeholders(path: str, text: str, allowed: list[str]) -> Iterator[Issue]:
    """Each ``{name}`` must be a plain name the runtime has: a parameter or a declared output."""
    for inner in dict.fromkeys(_BRACES.findall(text)):
        if not _IDENT.match(inner):
            yield error(path, f"{{{inner}}} is not a placeholder the runtime fills; use {{name}}")
        elif inner not in allowed:
            yield error(
                path,
                f"unknown placeholder {{{inner}}}; known: {', '.join(allowed)} (a key the "
                "executor returns is known once listed in the intent's `outputs`)",
            )


_SPOKEN_KEYS = frozenset(
    {
        "ask",
        "message",
        "say",
        "then_say",
        "retry_say",
        "directive",
        "readback_template",
        "stall_escape_say",
        "errors",
        "args",
        "text",
    }
)
_BUILTIN = frozenset({"items", "question", "summary", "declined", "value"})


def _flow_templates(flow: FlowConfig) -> Iterator[Issue]:
    """Every text the steward renders with ``{slot}`` values: spoken texts and response parts."""
    slots = {s.name for s in flow.slots}
    known = ", ".join(sorted(slots))
    for path, text in _texts(flow.model_dump(), "flow", rendered=False):
        for inner in dict.fromkeys(_BRACES.findall(text)):
            if _IDENT.match(inner.lstrip("_")) and inner not in slots | _BUILTIN:
                yield error(path, f"unknown slot {inner!r}; known: {known}")
            elif not _IDENT.match(inner.lstrip("_")) and not _in_response(path):
                yield error(
                    path, f"{{{inner}}} is not a placeholder the runtime fills; use {{slot}}"
                )


def _texts(node: object, path: str, rendered: bool) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        if rendered:
            yield path, node
    elif isinstance(node, dict):
        for key, value in cast(dict[str, object], node).items():
            inside = rendered or key in _SPOKEN_KEYS or "response" in key
            yield from _texts(value, f"{path}.{key}", inside)
    elif isinstance(node, list):
        for i, value in enumerate(cast(list[object], node)):
            yield from _texts(value, f"{path}[{i}]", rendered)


def _in_response(path: str) -> bool:
    return "response" in path


def _task_outputs(flow: FlowConfig) -> Iterator[Issue]:
    tasks = {t.name: t for t in flow.tasks}
    for i, slot in enumerate(flow.slots):
        for source in slot.sources:
            task = tasks.get(source.task) if isinstance(source, TaskSource) else None
            if task is not None and slot.name not in task.outputs.values():
                yield error(
                    f"flow.slots[{i}].source",
                    f"task {task.name!r} never fills {slot.name!r}; add "
                    f"`outputs: {{<result key>: {slot.name}}}` to that task",
                )


def _task_cycles(flow: FlowConfig) -> Iterator[Issue]:
    graph = _dependency_graph(flow)
    reported: set[str] = set()
    for i, task in enumerate(flow.tasks):
        node = f"task:{task.name}"
        if node in reported or (cycle := _cycle_from(graph, node)) is None:
            continue
        reported.update(cycle)
        trail = " -> ".join(n.removeprefix("slot:") for n in cycle)
        yield error(
            f"flow.tasks[{i}].requires",
            f"tasks wait on each other in a loop: {trail}; break the loop",
        )


def _dependency_graph(flow: FlowConfig) -> dict[str, list[str]]:
    """What each slot and task waits for: a task its inputs, a task-sourced slot its task."""
    graph: dict[str, list[str]] = {}
    for slot in flow.slots:
        deps = [f"slot:{r}" for r in slot.requires]
        deps += [f"task:{s.task}" for s in slot.sources if isinstance(s, TaskSource)]
        graph[f"slot:{slot.name}"] = deps
    for task in flow.tasks:
        graph[f"task:{task.name}"] = [f"slot:{s}" for s in (*task.inputs, *task.requires)]
    return graph


def _cycle_from(graph: dict[str, list[str]], start: str) -> list[str] | None:
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for nxt in graph.get(node, []):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if nxt not in parents:
                parents[nxt] = node
                frontier.append(nxt)
    return None


def _duplicate_variables(cfg: AgentConfig) -> Iterator[Issue]:
    seen: set[str] = set()
    for i, spec in enumerate(cfg.variables):
        if spec.name in seen:
            yield error(f"variables[{i}].name", f"variable {spec.name!r} is declared twice")
        seen.add(spec.name)


def _duplicate_steps(cfg: AgentConfig) -> Iterator[Issue]:
    scopes = [("procedure", cfg.procedure)]
    scopes += [(f"procedures.{n}.procedure", t.procedure) for n, t in cfg.procedures.items()]
    for path, procedure in scopes:
        seen: set[str] = set()
        for i, step in enumerate(procedure.steps if procedure else ()):
            if step.id in seen:
                yield error(
                    f"{path}.steps[{i}].id", f"step {step.id!r} is configured twice; merge them"
                )
            seen.add(step.id)


def _known_names(cfg: AgentConfig) -> Iterator[Issue]:
    slots = {s.name for s in cfg.flow.slots} if cfg.flow else set()
    known = slots | {v.name for v in cfg.variables}
    listing = ", ".join(sorted(known)) or "none declared"
    for tool, text in cfg.available_when.items():
        try:
            names = parse_condition(text).names
        except ConfigError:
            continue  # reported by the loader
        for name in sorted(names - known):
            yield error(f"available_when.{tool}", f"unknown name {name!r}; known: {listing}")
    yield from _expects(cfg, known, listing)


def _expects(cfg: AgentConfig, known: set[str], listing: str) -> Iterator[Issue]:
    sources = procedure_sources(cfg)
    if sources is None:
        return
    try:
        steps = compile_procedures(sources).steps.values()
    except ConfigError:
        return
    for step in steps:
        for name in step.expects:
            if name not in known:
                yield error(
                    f"{step.path}.expects",
                    f"step {step.id!r} expects unknown variable {name!r}; known: {listing}",
                )


def _comparisons(cfg: AgentConfig) -> Iterator[Issue]:
    types = {v.name: Typed(v.type, v.values) for v in cfg.variables}
    for slot in cfg.flow.slots if cfg.flow else ():
        if slot.type is not None:
            types.setdefault(slot.name, Typed(slot.type, tuple(slot.values)))
    for path, text in _conditions(cfg):
        for problem in impossible_comparisons(text, types):
            yield error(path, f"this condition can never hold: {problem}")


def _conditions(cfg: AgentConfig) -> Iterator[tuple[str, str]]:
    yield from ((f"available_when.{t}", x) for t, x in cfg.available_when.items())
    if cfg.flow is not None:
        for i, slot in enumerate(cfg.flow.slots):
            if slot.condition:
                yield f"flow.slots[{i}].condition", slot.condition
        for i, task in enumerate(cfg.flow.tasks):
            if task.condition:
                yield f"flow.tasks[{i}].condition", task.condition
    yield from _step_conditions(cfg)


def _step_conditions(cfg: AgentConfig) -> Iterator[tuple[str, str]]:
    sources = procedure_sources(cfg)
    try:
        steps = compile_procedures(sources).steps.values() if sources else ()
    except ConfigError:
        return
    for step in steps:
        if step.expr is not None:
            yield f"{step.path}.complete_when.expr", step.expr.source
        for expr in step.applies:
            yield f"{step.path}.applies_when.expr", expr.source
