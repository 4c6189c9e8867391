"""Publish validation and preflight of an agent's procedures (pure).

Errors block publishing: a ``requires`` cycle, an unknown step id, an irreversible gate naming
a tool the agent does not have, a judge step whose monitor is disabled, an extraction-eligible
variable without a description, writes to linked variables, duplicate group or step names.
Warnings do not: an enabled procedure with no steps, judge or extraction features with no
resolvable logic_slm (closed judge gates will then always veto), an unknown
``{{PROCEDURE:}}`` reference, and the scanner's recoveries. Every issue names its config path.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pipecat_steward.core.procedures.compiler import (
    CompiledProcedures,
    ScopeSource,
    compile_procedures,
)
from pipecat_steward.core.procedures.issues import Issue, IssueCode
from pipecat_steward.core.procedures.model import FailMode
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.exceptions import ConfigError

__all__ = ["ValidationReport", "validate_procedures"]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """Every error and warning, in the order found."""

    issues: tuple[Issue, ...]

    @property
    def errors(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == "error")

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when nothing blocks publishing."""
        return not self.errors


def validate_procedures(
    sources: Sequence[ScopeSource],
    *,
    variables: Sequence[VariableSpec] = (),
    tools: Collection[str] | None = None,
    logic_slm_resolvable: bool = True,
    writes: Mapping[str, str] | None = None,
    variables_path: str = "variables",
) -> ValidationReport:
    """Validate an agent's procedures against its variables and tools.

    Args:
        sources: The scopes (main first) with their prompts and ``procedure:`` sections.
        variables: The declared variable specs.
        tools: The agent's tool names (None skips the tool check).
        logic_slm_resolvable: Whether a logic_slm stage resolves (decided by the caller,
            e.g. with ``pipecat_steward.slm.resolve_stage``, without connecting).
        writes: Other writers of variables: variable name → config path (e.g. flow slots,
            whose values are mirrored into variables).
        variables_path: The config path of the variable list.
    """
    try:
        procs = compile_procedures(sources)
    except ConfigError as exc:
        return ValidationReport((Issue("error", "invalid_config", exc.path, exc.problem),))
    issues = list(procs.issues)
    issues += _tools(procs, tools)
    issues += _monitor(procs)
    issues += _variables(procs, variables, writes or {}, variables_path)
    issues += _logic_slm(procs, variables, logic_slm_resolvable)
    return ValidationReport(tuple(issues))


def _tools(procs: CompiledProcedures, tools: Collection[str] | None) -> list[Issue]:
    if tools is None:
        return []
    known = ", ".join(sorted(tools)) or "none"
    return [
        Issue(
            "error",
            "unknown_tool",
            procs.steps[step_id].path,
            f"irreversible step {step_id!r} gates tool {gate.tool!r}, which the agent does "
            f"not have (tools: {known}); add the tool or fix the name",
        )
        for gate in procs.gates.values()
        if gate.tool not in tools
        for step_id in gate.steps
    ]


def _monitor(procs: CompiledProcedures) -> list[Issue]:
    issues: list[Issue] = []
    for step in procs.steps.values():
        uses_judge = step.kind == "judge" or step.applies_llm is not None
        if uses_judge and not procs.checklists[step.checklist].monitor.enabled:
            what = "an AI judge" if step.kind == "judge" else "an llm applies_when"
            message = (
                f"step {step.id!r} needs {what} but the monitor of {step.checklist} is "
                "disabled, so it could never complete; enable the monitor or give it a "
                "variable or tool completion"
            )
            issues.append(Issue("error", "judge_with_monitor_disabled", step.path, message))
    return issues


def _variables(
    procs: CompiledProcedures,
    specs: Sequence[VariableSpec],
    writes: Mapping[str, str],
    path: str,
) -> list[Issue]:
    issues: list[Issue] = []
    linked = {s.name for s in specs if s.linked}
    for i, spec in enumerate(specs):
        if spec.extraction and not spec.description.strip():
            message = f"{spec.name!r} is extraction-eligible but has no description; describe it"
            issues.append(
                _error("extraction_without_description", f"{path}[{i}].description", message)
            )
        if spec.extraction and spec.linked:
            message = f"{spec.name!r} is linked (host-written) and cannot be extracted"
            issues.append(_error("linked_write", f"{path}[{i}].extraction", message))
    for step in procs.steps.values():
        for name in step.expects:
            if name in linked:
                message = (
                    f"step {step.id!r} expects {name!r}, a linked variable only the host writes"
                )
                issues.append(_error("linked_write", f"{step.path}.expects", message))
    for name, where in writes.items():
        if name in linked:
            message = f"writes linked variable {name!r}, which only the host may set; rename it"
            issues.append(_error("linked_write", where, message))
    return issues


def _error(code: IssueCode, path: str, message: str) -> Issue:
    return Issue("error", code, path, message)


def _logic_slm(
    procs: CompiledProcedures, specs: Sequence[VariableSpec], resolvable: bool
) -> list[Issue]:
    if resolvable:
        return []
    judged = [s.id for s in procs.steps.values() if s.kind == "judge" or s.applies_llm is not None]
    extracted = [s.name for s in specs if s.extraction]
    if not judged and not extracted:
        return []
    uses = ", ".join(
        [*(f"judge step {j!r}" for j in judged), *(f"extraction of {e!r}" for e in extracted)]
    )
    message = (
        f"no logic_slm stage resolves but {uses} need one; configure aux.logic_slm or a stack "
        "(judge steps will never complete and closed gates behind them will veto)"
    )
    return [
        Issue("warning", "no_logic_slm", "aux.logic_slm", message),
        *_closed_judge_gates(procs),
    ]


def _closed_judge_gates(procs: CompiledProcedures) -> list[Issue]:
    """A closed irreversible step behind a judge prerequisite can never run without a judge."""
    issues: list[Issue] = []
    for step in procs.steps.values():
        if not step.irreversible or step.fail_mode is not FailMode.CLOSED:
            continue
        judged = [a for a in procs.ancestors[step.id] if procs.steps[a].kind == "judge"]
        if judged:
            message = (
                f"irreversible step {step.id!r} (fail mode closed) waits on judge step(s) "
                f"{', '.join(map(repr, judged))} but no logic_slm stage resolves, so its tool "
                "would always be vetoed; configure aux.logic_slm or a stack, or make those "
                "steps deterministic"
            )
            issues.append(_error("no_logic_slm", step.path or "procedure", message))
    return issues
