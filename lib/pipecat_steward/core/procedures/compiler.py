"""Compile an agent's prompts and procedure configs into checklists, scopes and gates.

A *scope* is the main prompt or a topic. Each scope's ungrouped steps form its default
checklist (``scope:<name>``); each ``{{#procedure name}}`` group is its own checklist
(``group:<name>``), active where it is defined and in every scope that references it.
Each irreversible tool step compiles into a ``procedure_gate`` entry for its tool, kept apart
from the author's ``available_when`` (see :mod:`.gates`).

Compilation never raises on a cross-reference problem: it records an :class:`Issue` (publish
severity) and degrades the way the runtime does — the first duplicate wins, unknown
prerequisites are dropped, a cycle's edges are cut. ``strict=True`` raises instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType

from pipecat_steward.core.expressions import Expression, parse_condition
from pipecat_steward.core.procedures.blocks import Ref, ScannedPrompt, render_nodes, scan
from pipecat_steward.core.procedures.dag import ancestors_of, cut_cycles
from pipecat_steward.core.procedures.issues import Issue, IssueCode, IssueSeverity
from pipecat_steward.core.procedures.model import (
    GroupSettings,
    MonitorSettings,
    ProcedureConfig,
    StepSettings,
    load_procedure_config,
)
from pipecat_steward.core.procedures.steps import (
    ProcedureStep,
    block_guidance,
    build_step,
    humanize,
)
from pipecat_steward.exceptions import ConfigError

__all__ = [
    "Checklist",
    "CompiledProcedures",
    "CompiledScope",
    "ProcedureGate",
    "ScopeSource",
    "compile_procedures",
]

MAIN = "main"


@dataclass(frozen=True, slots=True)
class ScopeSource:
    """One scope's authored input: its prompt and its ``procedure:`` section."""

    name: str
    prompt: str = ""
    procedure: ProcedureConfig | Mapping[str, object] | None = None
    path: str = "procedure"
    prompt_path: str = "prompt"


@dataclass(frozen=True, slots=True)
class Checklist:
    """One checklist: a scope's ungrouped steps or a named group (own monitor budget)."""

    key: str
    title: str
    group: str | None
    scope: str
    steps: tuple[str, ...]
    monitor: MonitorSettings
    active_in: tuple[str, ...]
    condition: tuple[Expression, ...] = ()


@dataclass(frozen=True, slots=True)
class CompiledScope:
    """A scope: the prompt the model sees (markers stripped) and the checklists it arms."""

    name: str
    prompt: str
    checklists: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProcedureGate:
    """The ``procedure_gate`` entry of one tool: the irreversible steps it completes."""

    tool: str
    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CompiledProcedures:
    """Everything the runtime needs; immutable and shared by every session of an agent."""

    scopes: Mapping[str, CompiledScope]
    checklists: Mapping[str, Checklist]
    steps: Mapping[str, ProcedureStep]
    gates: Mapping[str, ProcedureGate]
    ancestors: Mapping[str, tuple[str, ...]]
    issues: tuple[Issue, ...] = ()

    def checklist_steps(self, key: str) -> tuple[ProcedureStep, ...]:
        """The steps of a checklist in document order."""
        return tuple(self.steps[s] for s in self.checklists[key].steps)


@dataclass(slots=True)
class _Build:
    issues: list[Issue] = field(default_factory=lambda: [])
    steps: dict[str, ProcedureStep] = field(default_factory=lambda: {})
    groups: dict[str, tuple[str, str]] = field(default_factory=lambda: {})  # name → scope, path
    order: dict[str, list[str]] = field(default_factory=lambda: {})  # checklist → step ids
    raw_requires: dict[str, tuple[str, ...] | None] = field(default_factory=lambda: {})

    def issue(self, severity: IssueSeverity, code: IssueCode, path: str, message: str) -> None:
        self.issues.append(Issue(severity, code, path, message))


def compile_procedures(
    sources: Sequence[ScopeSource], *, strict: bool = False
) -> CompiledProcedures:
    """Compile every scope of an agent.

    Args:
        sources: The scopes, the main scope first.
        strict: Raise on any error-severity issue (publish); otherwise degrade (runtime).

    Raises:
        ConfigError: A ``procedure:`` section is malformed, or ``strict`` and errors exist.
    """
    build = _Build()
    configs = [load_procedure_config(s.procedure, s.path) for s in sources]
    scans = [scan(s.prompt) for s in sources]
    for source, scanned in zip(sources, scans, strict=True):
        _scan_issues(build, source, scanned)
    for source, cfg, scanned in zip(sources, configs, scans, strict=True):
        if cfg.enabled:
            _collect_scope(build, source, cfg, scanned)
    _finish_dag(build)
    checklists = _checklists(build, sources, configs, scans)
    result = CompiledProcedures(
        scopes=MappingProxyType(_scopes(build, sources, scans, checklists)),
        checklists=MappingProxyType(checklists),
        steps=MappingProxyType(build.steps),
        gates=MappingProxyType(_gates(build)),
        ancestors=MappingProxyType(ancestors_of({k: s.requires for k, s in build.steps.items()})),
        issues=tuple(build.issues),
    )
    errors = [str(i) for i in build.issues if i.severity == "error"]
    if strict and errors:
        raise ConfigError("procedure", "invalid procedures:\n  " + "\n  ".join(errors))
    return result


def _scan_issues(build: _Build, source: ScopeSource, scanned: ScannedPrompt) -> None:
    for w in scanned.warnings:
        path = f"{source.prompt_path}#{w.subject}" if w.subject else source.prompt_path
        build.issue("warning", w.code, path, w.message)


def _collect_scope(
    build: _Build, source: ScopeSource, cfg: ProcedureConfig, scanned: ScannedPrompt
) -> None:
    settings = _settings_index(build, source, cfg, scanned)
    if scanned.has_blocks:
        shadowed = _register_groups(build, source, scanned)
        for block in scanned.steps:
            if block.group_ordinal not in shadowed:
                index, entry = settings.get(block.id, (-1, None))
                path = (
                    f"{source.path}.steps[{index}]"
                    if entry
                    else f"{source.prompt_path}#step:{block.id}"
                )
                where = _where(source, block.group, path)
                pills = (block.tools, block.components)
                _add(build, block.id, block_guidance(block), entry, pills, where)
                _add_group_applies(build, cfg, block.id)
    else:
        for i, entry in enumerate(cfg.steps):
            where = _where(source, None, f"{source.path}.steps[{i}]")
            _add(build, entry.id, entry.guidance or "", entry, ((), ()), where)
    if source.procedure is not None and not scanned.steps and not cfg.steps:
        message = "procedure is enabled but defines no steps; it arms nothing"
        build.issue("warning", "empty_procedure", source.path, message)


def _settings_index(
    build: _Build, source: ScopeSource, cfg: ProcedureConfig, scanned: ScannedPrompt
) -> dict[str, tuple[int, StepSettings]]:
    index: dict[str, tuple[int, StepSettings]] = {}
    known = {b.id for b in scanned.steps}
    for i, entry in enumerate(cfg.steps):
        if scanned.has_blocks and entry.id not in known:
            message = f"settings for step {entry.id!r}, which no {{{{#step}}}} block defines"
            build.issue("error", "unknown_step", f"{source.path}.steps[{i}].id", message)
        index.setdefault(entry.id, (i, entry))
    return index


def _register_groups(build: _Build, source: ScopeSource, scanned: ScannedPrompt) -> set[int]:
    """Register this prompt's groups (first wins); return the ordinals of shadowed ones."""
    shadowed: set[int] = set()
    for group in scanned.groups:
        path = f"{source.prompt_path}#procedure:{group.name}"
        if group.name in build.groups:
            first = build.groups[group.name][1]
            message = f"group {group.name!r} is already defined at {first}; the first wins"
            build.issue("error", "duplicate_group", path, message)
            shadowed.add(group.ordinal)
            continue
        build.groups[group.name] = (source.name, path)
    return shadowed


def _where(source: ScopeSource, group: str | None, path: str) -> tuple[str, str | None, str, str]:
    key = f"group:{group}" if group else f"scope:{source.name}"
    return key, group, source.name, path


def _add(
    build: _Build,
    step_id: str,
    body: str,
    settings: StepSettings | None,
    pills: tuple[tuple[str, ...], tuple[str, ...]],
    where: tuple[str, str | None, str, str],
) -> None:
    key, _, _, path = where
    if step_id in build.steps:
        message = f"step id {step_id!r} is already used at {build.steps[step_id].path}; rename it"
        build.issue("error", "duplicate_step", path, message)
        return
    build.raw_requires[step_id] = settings.requires if settings else None
    step = build_step(
        step_id=step_id,
        body=body,
        settings=settings,
        pills=pills,
        where=where,
        requires=(),
    )
    build.steps[step_id] = step
    build.order.setdefault(key, []).append(step_id)


def _add_group_applies(build: _Build, cfg: ProcedureConfig, step_id: str) -> None:
    step = build.steps.get(step_id)
    if step is None or step.group is None:
        return
    settings = cfg.groups.get(step.group, GroupSettings())
    if settings.applies_when is not None:
        applies = (parse_condition(settings.applies_when.expr), *step.applies)
        build.steps[step_id] = _replace_applies(step, applies)


def _replace_applies(step: ProcedureStep, applies: tuple[Expression, ...]) -> ProcedureStep:
    return replace(step, applies=applies)


def _finish_dag(build: _Build) -> None:
    for key, ids in build.order.items():
        for i, step_id in enumerate(ids):
            requires = _requires(build, step_id, ids[:i], ids)
            build.steps[step_id] = replace(build.steps[step_id], requires=requires)
        graph = {i: build.steps[i].requires for i in ids}
        cut, cycle = cut_cycles(graph)
        if cycle:
            first = build.steps[cycle[0]]
            message = f"requires forms a cycle through {', '.join(cycle)} in {key}; break it"
            build.issue("error", "requires_cycle", f"{first.path}.requires", message)
            for step_id in cycle:
                build.steps[step_id] = replace(build.steps[step_id], requires=cut[step_id])


def _requires(
    build: _Build, step_id: str, earlier: list[str], siblings: list[str]
) -> tuple[str, ...]:
    raw = build.raw_requires.get(step_id)
    if raw is None:
        return (earlier[-1],) if earlier else ()
    kept: list[str] = []
    for name in raw:
        if name in siblings:
            kept.append(name)
        else:
            message = (
                f"requires {name!r}, which is not a step of this procedure ({', '.join(siblings)})"
            )
            path = f"{build.steps[step_id].path}.requires"
            build.issue("error", "unknown_step", path, message)
    return tuple(kept)


def _checklists(
    build: _Build,
    sources: Sequence[ScopeSource],
    configs: Sequence[ProcedureConfig],
    scans: Sequence[ScannedPrompt],
) -> dict[str, Checklist]:
    refs = {s.name: set(sc.references) for s, sc in zip(sources, scans, strict=True)}
    by_scope = {s.name: c for s, c in zip(sources, configs, strict=True)}
    out: dict[str, Checklist] = {}
    for key, ids in build.order.items():
        first = build.steps[ids[0]]
        cfg = by_scope[first.scope]
        group = first.group
        settings = cfg.groups.get(group, GroupSettings()) if group else GroupSettings()
        active = [first.scope, *(s.name for s in sources if group and group in refs[s.name])]
        out[key] = Checklist(
            key=key,
            title=settings.title or humanize(group or first.scope),
            group=group,
            scope=first.scope,
            steps=tuple(ids),
            monitor=settings.monitor or cfg.monitor,
            active_in=tuple(dict.fromkeys(active)),
            condition=(parse_condition(settings.applies_when.expr),)
            if settings.applies_when
            else (),
        )
    return out


def _scopes(
    build: _Build,
    sources: Sequence[ScopeSource],
    scans: Sequence[ScannedPrompt],
    checklists: Mapping[str, Checklist],
) -> dict[str, CompiledScope]:
    out: dict[str, CompiledScope] = {}
    for source, scanned in zip(sources, scans, strict=True):
        unknown: list[str] = []
        prompt = render_nodes(scanned.nodes, partial(_expand, build, checklists, unknown=unknown))
        for name in dict.fromkeys(unknown):
            message = f"{{{{PROCEDURE:{name}}}}} names no procedure group; left as text"
            build.issue("warning", "unknown_reference", source.prompt_path, message)
        armed = tuple(k for k, c in checklists.items() if source.name in c.active_in)
        out[source.name] = CompiledScope(source.name, prompt, armed)
    return out


def _expand(
    build: _Build, checklists: Mapping[str, Checklist], ref: Ref, *, unknown: list[str]
) -> str:
    checklist = checklists.get(f"group:{ref.name}")
    if checklist is None:
        unknown.append(ref.name)
        return ref.raw
    steps = [build.steps[s] for s in checklist.steps]
    return "\n".join(f"{i}. {s.short_guidance or s.title}" for i, s in enumerate(steps, 1))


def _gates(build: _Build) -> dict[str, ProcedureGate]:
    gates: dict[str, list[str]] = {}
    for step in build.steps.values():
        if not step.irreversible:
            continue
        if step.tool is None:
            message = "an irreversible step needs complete_when kind tool naming the tool to gate"
            build.issue("error", "irreversible_without_tool", step.path, message)
            continue
        if not step.requires:
            message = f"irreversible step {step.id!r} has no prerequisites; its gate binds nothing"
            build.issue("warning", "gate_without_prerequisites", step.path, message)
        gates.setdefault(step.tool, []).append(step.id)
    return {tool: ProcedureGate(tool, tuple(ids)) for tool, ids in gates.items()}
