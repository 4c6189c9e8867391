"""A flow config compiled once at load: parsed conditions, formatters and lookup maps.

``compile_flow`` is the only way to build a ``CompiledFlow``; it raises ``ConfigError`` listing
every problem with its path. The engine reads nothing but this object and the session state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pipecat_steward.core.expressions import Expression, parse_condition
from pipecat_steward.core.slots.config import FlowConfig, SlotConfig, TaskConfig
from pipecat_steward.core.slots.readback import Formatter, compile_format
from pipecat_steward.core.slots.sources import (
    AnnounceSource,
    EventSource,
    SlotSource,
    UserSource,
    takes,
    task_of,
)
from pipecat_steward.core.slots.validate import STEWARD_TOOLS, check_flow, load_flow_config
from pipecat_steward.exceptions import ConfigError

__all__ = ["CompiledFlow", "CompiledSlot", "CompiledTask", "UserRow", "compile_flow"]

UserRow = tuple[str, str, Expression | None, tuple[str, ...]]
"""A user slot as the visibility pass reads it: name, setter (or ""), condition, requires."""


@dataclass(frozen=True, slots=True)
class CompiledSlot:
    """A slot with its condition parsed and its readback format compiled.

    Its sources and what they make it (a user, event or announced slot, a task's output) are
    read once here: the engine asks on every step, and the config keeps them as a pydantic
    private attribute, slow to reach.
    """

    config: SlotConfig
    condition: Expression | None
    fmt: Formatter
    sources: tuple[SlotSource, ...] = field(init=False)
    """Where the value comes from, parsed when the config was loaded."""
    task_source: str | None = field(init=False)
    """The task whose output fills this slot, if any."""
    is_user: bool = field(init=False)
    is_event: bool = field(init=False)
    is_announce: bool = field(init=False)

    def __post_init__(self) -> None:
        sources = self.config.sources
        for name, value in (
            ("sources", sources),
            ("task_source", task_of(sources)),
            ("is_user", takes(sources, UserSource)),
            ("is_event", takes(sources, EventSource)),
            ("is_announce", takes(sources, AnnounceSource)),
        ):
            object.__setattr__(self, name, value)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def label(self) -> str:
        return self.config.label or self.config.name


@dataclass(frozen=True, slots=True)
class CompiledTask:
    """A task with its condition parsed."""

    config: TaskConfig
    condition: Expression | None

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True, slots=True)
class CompiledFlow:
    """Everything the engine needs about a flow, derived once.

    Attributes:
        config: The validated source config.
        slots: Slots in declaration order (the default question order).
        tasks: Tasks in declaration order (the firing priority).
        slot: Slot by name.
        setters: Setter tool → ``((field or None, slot name), …)``.
        executors: Executor tool → task names it serves.
        deferred_eligible: Slots routed to deferred for a grouped readback.
        partner: Slot → the slot it is asked together with (at most two per question).
        user_slots: Names of slots a caller can fill.
        conditional: Slots with a condition (the only ones auto-deactivation looks at).

    Derived in ``__post_init__`` (not constructor arguments, not compared) so the engine's hot
    paths do not rebuild them on every invocation: ``ask_order`` (required and announce slots
    first, then optional ones), ``user_compiled`` (the user slots in declaration order) and
    ``user_rows`` (per user slot: name, setter or "", condition, requires), ``grouped_tasks``
    (tasks with ``readback_inputs``),
    ``task_inputs`` / ``task_requires`` (task name → compiled slots), ``has_terminal``,
    ``optional`` (slots with ``required: false``; declining one meets a ``requires``) and
    ``protocol_blocks``, a cache per visible-tool set of the collection block, the hidden tools
    and the sorted visible names (all functions of the flow and that frozen set only).
    """

    config: FlowConfig
    slots: tuple[CompiledSlot, ...]
    tasks: tuple[CompiledTask, ...]
    slot: Mapping[str, CompiledSlot]
    task: Mapping[str, CompiledTask]
    setters: Mapping[str, tuple[tuple[str | None, str], ...]]
    executors: Mapping[str, tuple[str, ...]]
    deferred_eligible: frozenset[str]
    partner: Mapping[str, str]
    user_slots: tuple[str, ...]
    conditional: tuple[CompiledSlot, ...]
    all_tools: frozenset[str] = field(init=False, repr=False, compare=False)
    ask_order: tuple[CompiledSlot, ...] = field(init=False, repr=False, compare=False)
    user_compiled: tuple[CompiledSlot, ...] = field(init=False, repr=False, compare=False)
    user_rows: tuple[UserRow, ...] = field(init=False, repr=False, compare=False)
    grouped_tasks: tuple[CompiledTask, ...] = field(init=False, repr=False, compare=False)
    task_inputs: Mapping[str, tuple[CompiledSlot, ...]] = field(
        init=False, repr=False, compare=False
    )
    task_requires: Mapping[str, tuple[CompiledSlot, ...]] = field(
        init=False, repr=False, compare=False
    )
    has_terminal: bool = field(init=False, repr=False, compare=False)
    optional: frozenset[str] = field(init=False, repr=False, compare=False)
    protocol_blocks: dict[frozenset[str], tuple[str, frozenset[str], tuple[str, ...]]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        derived: dict[str, object] = {
            "all_tools": frozenset(self.setters) | STEWARD_TOOLS | frozenset(self.executors),
            "ask_order": (
                *(s for s in self.slots if s.config.required or s.is_announce),
                *(s for s in self.slots if not (s.config.required or s.is_announce)),
            ),
            "user_compiled": tuple(self.slot[n] for n in self.user_slots),
            "user_rows": tuple(
                (s.name, s.config.setter or "", s.condition, tuple(s.config.requires))
                for s in (self.slot[n] for n in self.user_slots)
            ),
            "grouped_tasks": tuple(t for t in self.tasks if t.config.readback_inputs),
            "task_inputs": MappingProxyType(
                {t.name: tuple(self.slot[n] for n in t.config.inputs) for t in self.tasks}
            ),
            "task_requires": MappingProxyType(
                {t.name: tuple(self.slot[n] for n in t.config.requires) for t in self.tasks}
            ),
            "has_terminal": any(t.config.terminal for t in self.tasks),
            "optional": frozenset(s.name for s in self.slots if not s.config.required),
            "protocol_blocks": {},
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @property
    def tool_names(self) -> frozenset[str]:
        """Every tool the steward manages: setters, steward tools and executors."""
        return self.all_tools


def compile_flow(
    raw: Mapping[str, object] | FlowConfig, variables: Iterable[str] = ()
) -> CompiledFlow:
    """Validate and compile a flow config.

    Args:
        raw: The config as data (from JSON/YAML) or an already-built ``FlowConfig``.
        variables: Declared variable names that conditions may read besides slots.

    Raises:
        ConfigError: Listing every problem, one ``path: problem`` per line.
    """
    config = load_flow_config(raw)
    errors = check_flow(config, variables)
    slots: list[CompiledSlot] = []
    for i, s in enumerate(config.slots):
        try:
            slots.append(_compile_slot(i, s))
        except ConfigError as exc:
            errors.append(exc)
    if errors:
        raise ConfigError("", "invalid flow config:\n  " + "\n  ".join(map(str, errors)))
    tasks = tuple(CompiledTask(t, _condition(t.condition)) for t in config.tasks)
    return _assemble(config, tuple(slots), tasks)


def _condition(text: str | None) -> Expression | None:
    return parse_condition(text) if text else None


def _compile_slot(i: int, slot: SlotConfig) -> CompiledSlot:
    fmt = compile_format(slot.readback_fmt, f"slots[{i}].readback_fmt")
    return CompiledSlot(slot, _condition(slot.condition), fmt)


def _assemble(
    config: FlowConfig, slots: tuple[CompiledSlot, ...], tasks: tuple[CompiledTask, ...]
) -> CompiledFlow:
    setters: dict[str, list[tuple[str | None, str]]] = {}
    for s in slots:
        if s.config.setter:
            setters.setdefault(s.config.setter, []).append((s.config.setter_field, s.name))
    executors: dict[str, list[str]] = {}
    for t in tasks:
        executors.setdefault(t.config.tool, []).append(t.name)
    partner: dict[str, str] = {}
    for a, b in config.ask_together:
        partner[a], partner[b] = b, a
    return CompiledFlow(
        config=config,
        slots=slots,
        tasks=tasks,
        slot=MappingProxyType({s.name: s for s in slots}),
        task=MappingProxyType({t.name: t for t in tasks}),
        setters=MappingProxyType({k: tuple(v) for k, v in setters.items()}),
        executors=MappingProxyType({k: tuple(v) for k, v in executors.items()}),
        deferred_eligible=_deferred_eligible(slots, tasks),
        partner=MappingProxyType(partner),
        user_slots=tuple(s.name for s in slots if s.is_user),
        conditional=tuple(s for s in slots if s.condition is not None),
    )


def _deferred_eligible(
    slots: tuple[CompiledSlot, ...], tasks: tuple[CompiledTask, ...]
) -> frozenset[str]:
    """Slots held for a grouped readback: readback slot, input of a grouped task, of no ungrouped task, and no task-sourced requires."""
    by_name = {s.name: s for s in slots}
    eligible: set[str] = set()
    for s in slots:
        feeds = [t.config for t in tasks if s.name in t.config.inputs]
        grouped = any(t.readback_inputs for t in feeds)
        ungrouped = any(not t.readback_inputs for t in feeds)
        task_req = any(by_name[r].task_source for r in s.config.requires if r in by_name)
        if s.config.requires_readback and s.is_user and grouped and not ungrouped and not task_req:
            eligible.add(s.name)
    return frozenset(eligible)
