"""Cross-reference checks of a flow config: unknown names, cycles, clashes.

Each check yields ``ConfigError`` values naming the config path and the fix, e.g.
``slots[3].requires: unknown slot 'date_x'; known: date, party_size``. ``check_flow`` returns
every error so ``steward validate`` can list them all at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping

from pydantic import ValidationError

from pipecat_steward.core.expressions import parse_condition
from pipecat_steward.core.slots.config import (
    ConfirmBefore,
    FlowConfig,
    OnExhaust,
    SlotConfig,
    TaskConfig,
    ThenCall,
)
from pipecat_steward.core.slots.sources import (
    SOURCE_FIX,
    AnnounceSource,
    TaskSource,
    UserSource,
    takes,
)
from pipecat_steward.exceptions import ConfigError, ExpressionError

__all__ = ["STEWARD_TOOLS", "check_flow", "load_flow_config", "placeholders"]

STEWARD_TOOLS = frozenset({"confirm_pending", "reject_pending", "correct_slot", "decline_slot"})
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load_flow_config(raw: Mapping[str, object] | FlowConfig) -> FlowConfig:
    """Validate the shape of a raw config.

    Raises:
        ConfigError: One error per bad entry, each with its path (``slots[2].requires``).
    """
    if isinstance(raw, FlowConfig):
        return raw
    try:
        return FlowConfig.model_validate(raw)
    except ValidationError as exc:
        lines = [f"{_loc(e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ConfigError("", "invalid flow config:\n  " + "\n  ".join(lines)) from None


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def placeholders(text: str) -> list[str]:
    """Return the ``{name}`` placeholders in ``text``."""
    return _PLACEHOLDER.findall(text)


def check_flow(flow: FlowConfig, variables: Iterable[str] = ()) -> list[ConfigError]:
    """Return every cross-reference error of ``flow`` (empty when valid).

    Args:
        flow: The shape-validated config.
        variables: Names of declared variables that conditions may also read.
    """
    names = [s.name for s in flow.slots]
    ctx = _Context(flow, frozenset(names), frozenset(variables))
    errors: list[ConfigError] = []
    for check in _CHECKS:
        errors.extend(check(ctx))
    return errors


class _Context:
    def __init__(self, flow: FlowConfig, slots: frozenset[str], variables: frozenset[str]) -> None:
        self.flow = flow
        self.slots = slots
        self.variables = variables
        self.tasks = frozenset(t.name for t in flow.tasks)

    def unknown(self, path: str, name: str) -> ConfigError:
        known = ", ".join(sorted(self.slots))
        return ConfigError(path, f"unknown slot {name!r}; known: {known}")

    def refs(self, path: str, items: Iterable[str]) -> Iterator[ConfigError]:
        for i, name in enumerate(items):
            if name not in self.slots:
                yield self.unknown(f"{path}[{i}]", name)


def _duplicates(ctx: _Context) -> Iterator[ConfigError]:
    for kind, items in (("slot", ctx.flow.slots), ("task", ctx.flow.tasks)):
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.name in seen:
                yield ConfigError(f"{kind}s[{i}].name", f"duplicate {kind} name {item.name!r}")
            seen.add(item.name)


def _slot_sources(ctx: _Context) -> Iterator[ConfigError]:
    for i, slot in enumerate(ctx.flow.slots):
        for text in slot.unknown_sources:
            yield ConfigError(f"slots[{i}].source", f"unknown source {text!r}; {SOURCE_FIX}")
        for source in slot.sources:
            if isinstance(source, TaskSource) and source.task not in ctx.tasks:
                yield ConfigError(
                    f"slots[{i}].source", f"no task named {source.task!r} fills this slot"
                )
        yield from _slot_kind(i, slot)


def _slot_kind(i: int, slot: SlotConfig) -> Iterator[ConfigError]:
    if takes(slot.sources, AnnounceSource):
        if not slot.message:
            yield ConfigError(f"slots[{i}].message", "an announce slot needs a `message`")
        if slot.setter:
            yield ConfigError(f"slots[{i}].setter", "an announce slot has no setter; remove it")
    if takes(slot.sources, UserSource) and not slot.setter:
        yield ConfigError(
            f"slots[{i}].setter", f"user slot {slot.name!r} needs a `setter` tool name"
        )
    if slot.setter_field and not slot.setter:
        yield ConfigError(f"slots[{i}].setter_field", "`setter_field` needs a `setter`")
    if slot.type == "enum" and not slot.values:
        yield ConfigError(
            f"slots[{i}].values", "an enum slot needs `values`: list the allowed answers"
        )


def _slot_refs(ctx: _Context) -> Iterator[ConfigError]:
    for i, slot in enumerate(ctx.flow.slots):
        yield from ctx.refs(f"slots[{i}].requires", slot.requires)
        if slot.validate_against and slot.validate_against.filled_slot not in ctx.slots:
            yield ctx.unknown(
                f"slots[{i}].validate_against.filled_slot", slot.validate_against.filled_slot
            )
    if ctx.flow.gate_slot and ctx.flow.gate_slot not in ctx.slots:
        yield ctx.unknown("gate_slot", ctx.flow.gate_slot)
    yield from _gate_slot(ctx)
    for i, group in enumerate(ctx.flow.ask_together):
        if len(group) != 2:
            yield ConfigError(f"ask_together[{i}]", "a group holds exactly two slots")
        yield from ctx.refs(f"ask_together[{i}]", group)


def _gate_slot(ctx: _Context) -> Iterator[ConfigError]:
    """A gate slot is asked before anything else, so it must be one the caller can settle."""
    gate = next((s for s in ctx.flow.slots if s.name == ctx.flow.gate_slot), None)
    if gate is None:
        return
    if gate.requires_readback:
        yield ConfigError(
            "gate_slot",
            f"gate slot {gate.name!r} has requires_readback: nothing but its question runs "
            "until it is settled, so its readback could never be confirmed; remove "
            "requires_readback from it or choose another gate slot",
        )
    if not takes(gate.sources, UserSource) or gate.requires or gate.condition:
        yield ConfigError(
            "gate_slot",
            f"gate slot {gate.name!r} must be a user slot without requires or condition "
            "(the caller answers it first); choose another gate slot",
        )


def _task_refs(ctx: _Context) -> Iterator[ConfigError]:
    for i, task in enumerate(ctx.flow.tasks):
        yield from ctx.refs(f"tasks[{i}].inputs", task.inputs)
        yield from ctx.refs(f"tasks[{i}].requires", task.requires)
        yield from ctx.refs(f"tasks[{i}].on_failure.clear_slots", task.on_failure.clear_slots)
        for key, slot in task.outputs.items():
            if slot not in ctx.slots:
                yield ctx.unknown(f"tasks[{i}].outputs.{key}", slot)
        if task.tool in STEWARD_TOOLS:
            yield ConfigError(f"tasks[{i}].tool", f"{task.tool!r} is a steward tool; rename it")
        if task.rerun_on_new_input and (task.terminal or task.irreversible):
            yield ConfigError(
                f"tasks[{i}].rerun_on_new_input",
                "a terminal or irreversible task must not run again on its own; "
                "remove rerun_on_new_input (a correction still re-runs it after confirmation)",
            )
        if task.confirm_before:
            yield from _confirm_before(ctx, i, task)


def _confirm_before(ctx: _Context, i: int, task: TaskConfig) -> Iterator[ConfigError]:
    path = f"tasks[{i}].confirm_before"
    if not (task.terminal or task.irreversible):
        yield ConfigError(
            path,
            "confirm_before guards a task that cannot be undone; mark the task "
            "`terminal: true` or `irreversible: true`, or remove confirm_before",
        )
    by_name = {s.name: s for s in ctx.flow.slots}
    if not any(n in by_name and takes(by_name[n].sources, UserSource) for n in task.inputs):
        yield ConfigError(
            path, "confirm_before reads back what the caller gave: add a user slot to `inputs`"
        )


def _cycles(ctx: _Context) -> Iterator[ConfigError]:
    graph = {s.name: [r for r in s.requires if r in ctx.slots] for s in ctx.flow.slots}
    state: dict[str, int] = {}
    for i, slot in enumerate(ctx.flow.slots):
        if slot.name not in state and (cycle := _cycle_from(graph, slot.name, state)):
            yield ConfigError(
                f"slots[{i}].requires", f"circular requires: {' -> '.join(cycle)}; break the loop"
            )
            return


def _cycle_from(
    graph: Mapping[str, list[str]], start: str, state: dict[str, int]
) -> list[str] | None:
    """Depth-first from ``start`` with an explicit stack (a chain of any length, no recursion).

    ``state`` marks nodes on the current path (1) and finished ones (2); returns the path from
    ``start`` into the first cycle met, or None.
    """
    path, pending = [start], [iter(graph[start])]
    state[start] = 1
    while pending:
        nxt = next(pending[-1], None)
        if nxt is None:
            state[path.pop()] = 2
            pending.pop()
        elif state.get(nxt) == 1:
            return [*path, nxt]
        elif nxt not in state:
            state[nxt] = 1
            path.append(nxt)
            pending.append(iter(graph[nxt]))
    return None


def _setters(ctx: _Context) -> Iterator[ConfigError]:
    by_setter: dict[str, list[tuple[int, SlotConfig]]] = {}
    for i, slot in enumerate(ctx.flow.slots):
        if slot.setter:
            by_setter.setdefault(slot.setter, []).append((i, slot))
    tools = {t.tool for t in ctx.flow.tasks}
    for setter, members in by_setter.items():
        i = members[0][0]
        if setter in STEWARD_TOOLS or setter in tools:
            yield ConfigError(
                f"slots[{i}].setter", f"{setter!r} clashes with a task or steward tool"
            )
        yield from _setter_fields(setter, members)


def _setter_fields(setter: str, members: list[tuple[int, SlotConfig]]) -> Iterator[ConfigError]:
    if len(members) == 1:
        return
    seen: set[str] = set()
    for i, slot in members:
        if not slot.setter_field:
            yield ConfigError(
                f"slots[{i}].setter_field",
                f"setter {setter!r} fills several slots; give each a distinct `setter_field`",
            )
        elif slot.setter_field in seen:
            yield ConfigError(
                f"slots[{i}].setter_field",
                f"field {slot.setter_field!r} of setter {setter!r} is mapped twice",
            )
        else:
            seen.add(slot.setter_field)


def _conditions(ctx: _Context) -> Iterator[ConfigError]:
    known = ctx.slots | ctx.variables
    items = [(f"slots[{i}].condition", s.condition) for i, s in enumerate(ctx.flow.slots)]
    items += [(f"tasks[{i}].condition", t.condition) for i, t in enumerate(ctx.flow.tasks)]
    for path, text in items:
        if text is None:
            continue
        try:
            expr = parse_condition(text)
        except ExpressionError as exc:
            yield exc.at(path)
            continue
        for name in sorted(expr.names - known):
            yield ConfigError(path, f"unknown name {name!r}; known: {', '.join(sorted(known))}")


def _templates(ctx: _Context) -> Iterator[ConfigError]:
    for path, text in _template_texts(ctx.flow):
        for name in placeholders(text):
            if name not in ctx.slots and name not in _BUILTIN_PLACEHOLDERS:
                yield ctx.unknown(path, name)


_BUILTIN_PLACEHOLDERS = frozenset({"items", "question", "summary", "declined", "value"})


def _template_texts(flow: FlowConfig) -> Iterator[tuple[str, str]]:
    for i, slot in enumerate(flow.slots):
        yield f"slots[{i}].ask", slot.ask
        yield f"slots[{i}].message", slot.message
        for code, text in slot.validation.errors.items():
            yield f"slots[{i}].validation.errors.{code}", text
        yield from _exhaust_texts(f"slots[{i}].validation.on_exhaust", slot.validation.on_exhaust)
    for i, task in enumerate(flow.tasks):
        yield f"tasks[{i}].then_say", task.then_say
        if isinstance(task.confirm_before, ConfirmBefore):
            yield f"tasks[{i}].confirm_before.say", task.confirm_before.say
        yield f"tasks[{i}].on_failure.retry_say", task.on_failure.retry_say
        yield from _exhaust_texts(f"tasks[{i}].on_failure.on_exhaust", task.on_failure.on_exhaust)
    yield from _exhaust_texts("steer_back.on_exhaust", flow.steer_back.on_exhaust)
    yield from _exhaust_texts("handover", OnExhaust(then=flow.handover))


def _exhaust_texts(path: str, exhaust: OnExhaust) -> Iterator[tuple[str, str]]:
    yield f"{path}.say", exhaust.say
    if isinstance(exhaust.then, ThenCall):
        for key, value in exhaust.then.args.items():
            if isinstance(value, str):
                yield f"{path}.then.args.{key}", value


_CHECKS: tuple[Callable[[_Context], Iterator[ConfigError]], ...] = (
    _duplicates,
    _slot_sources,
    _slot_refs,
    _task_refs,
    _cycles,
    _setters,
    _conditions,
    _templates,
)
