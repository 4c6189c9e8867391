"""Procedure state: the ``proc_*`` variables on the blackboard plus a small runtime record.

Step progress lives in ordinary variables so every condition, gate and the checklist see it at
once: ``proc_<id>_done`` and ``proc_<id>_na`` per step, ``proc_current_step`` overall.
:class:`ProcedureState` keeps what is not a variable: the active scopes, tools blocked by a
veto (never their arguments), this topic visit's empty results and the last violations.
Every function here is pure; writes return a :class:`ProcedureUpdate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from pipecat_steward.core.expressions import Expression
from pipecat_steward.core.expressions.operators import truthy
from pipecat_steward.core.procedures.compiler import Checklist, CompiledProcedures
from pipecat_steward.core.procedures.steps import ProcedureStep
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.variables import JsonValue, VariableChange

__all__ = [
    "CURRENT_STEP",
    "BlockedTool",
    "ProcedureState",
    "ProcedureUpdate",
    "ProcedureView",
    "StepState",
    "ProcedureViolation",
    "ViolationKind",
    "Writer",
    "applies",
    "applies_reads",
    "armed_checklists",
    "armed_steps",
    "current_step",
    "done_name",
    "holds",
    "na_name",
    "ready",
    "step_state",
    "unknown",
]

CURRENT_STEP = "proc_current_step"
ViolationKind = Literal["skipped_step", "hallucination", "off_procedure", "premature_action"]


def done_name(step_id: str) -> str:
    """``proc_<id>_done``."""
    return f"proc_{step_id}_done"


def na_name(step_id: str) -> str:
    """``proc_<id>_na``: the monitor judged the step not applicable."""
    return f"proc_{step_id}_na"


StepState = Literal["open", "done", "not_applicable"]
"""A step's state as the checklist shows it."""


@dataclass(frozen=True, slots=True)
class ProcedureViolation:
    """A monitor finding, recorded for the checklist (the monitor lives in ``core/monitor``)."""

    kind: ViolationKind
    step: str | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class BlockedTool:
    """A tool a veto blocked; ``noted`` is the next prerequisite the last note named."""

    tool: str
    noted: str | None = None


@dataclass(frozen=True, slots=True)
class ProcedureState:
    """The non-variable part of procedure progress (JSON-safe via ``to_dict``).

    Attributes:
        scopes: Active scopes, outermost first (``("main", "appointments")``).
        blocked: Tools vetoed this visit whose prerequisites are still being worked through.
        empty_results: ``(step id, tool-call id)`` of this visit's empty results, in order.
        violations: ``(checklist key, violation)``, the last one per checklist.
        visit: Bumped on every scope change (queued work from an older visit is stale).
        receipts: ``(step id, result summary)`` of each irreversible step's completing result,
            so a vetoed repeat can name the earlier result.
    """

    scopes: tuple[str, ...] = ()
    blocked: tuple[BlockedTool, ...] = ()
    empty_results: tuple[tuple[str, str], ...] = ()
    violations: tuple[tuple[str, ProcedureViolation], ...] = ()
    visit: int = 0
    receipts: tuple[tuple[str, str], ...] = ()

    def receipt(self, step_id: str) -> str | None:
        """The summary of the result that completed ``step_id`` (irreversible steps)."""
        return next((r for s, r in self.receipts if s == step_id), None)

    def last_violation(self, checklist: str) -> ProcedureViolation | None:
        """The last violation recorded on ``checklist``."""
        return next((v for k, v in self.violations if k == checklist), None)

    def to_dict(self) -> dict[str, JsonValue]:
        """Serialise to JSON-safe data (``from_dict`` restores it)."""
        return {
            "scopes": list(self.scopes),
            "blocked": [{"tool": b.tool, "noted": b.noted} for b in self.blocked],
            "empty_results": [list(e) for e in self.empty_results],
            "violations": [
                {"checklist": k, "kind": v.kind, "step": v.step, "detail": v.detail}
                for k, v in self.violations
            ],
            "visit": self.visit,
            "receipts": [list(r) for r in self.receipts],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> ProcedureState:
        """Rebuild from ``to_dict`` output."""
        raw = cast(dict[str, list[dict[str, str]]], data)
        return cls(
            scopes=tuple(cast(list[str], data.get("scopes", []))),
            blocked=tuple(BlockedTool(b["tool"], b.get("noted")) for b in raw.get("blocked", [])),
            empty_results=tuple(
                (str(e[0]), str(e[1])) for e in cast(list[list[str]], data.get("empty_results", []))
            ),
            violations=tuple(
                (
                    v["checklist"],
                    ProcedureViolation(cast(ViolationKind, v["kind"]), v.get("step"), v["detail"]),
                )
                for v in raw.get("violations", [])
            ),
            visit=int(cast(int, data.get("visit", 0))),
            receipts=tuple(
                (str(r[0]), str(r[1])) for r in cast(list[list[str]], data.get("receipts", []))
            ),
        )


@dataclass(frozen=True, slots=True)
class ProcedureUpdate:
    """The result of a write: new state, new variables, what changed and what completed."""

    state: ProcedureState
    variables: Mapping[str, JsonValue]
    changes: tuple[VariableChange, ...] = ()
    completed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProcedureView:
    """What a procedure decision reads: the compiled procedures, their state and the blackboard.

    Attributes:
        procs: The compiled procedures.
        state: The procedure state.
        variables: The blackboard.
    """

    procs: CompiledProcedures
    state: ProcedureState
    variables: Mapping[str, JsonValue]

    def after(self, update: ProcedureUpdate) -> ProcedureView:
        """The same procedures over an update's state and variables."""
        return ProcedureView(self.procs, update.state, update.variables)

    def current(self) -> ProcedureStep | None:
        """The next ready step (:func:`current_step`)."""
        return current_step(self.procs, self.state, self.variables)


@dataclass(slots=True)
class Writer:
    """Accumulates blackboard writes over a copy of the variables."""

    variables: dict[str, JsonValue]
    changes: list[VariableChange] = field(default_factory=lambda: [])
    completed: list[str] = field(default_factory=lambda: [])

    @classmethod
    def over(cls, variables: Mapping[str, JsonValue]) -> Writer:
        return cls(dict(variables))

    def set(self, name: str, value: JsonValue) -> None:
        old = self.variables.get(name)
        if name not in self.variables or not same_value(old, value):
            self.variables[name] = value
            self.changes.append(VariableChange(name, old, value, "program"))

    def setdefault(self, name: str, value: JsonValue) -> None:
        if name not in self.variables:
            self.set(name, value)

    def delete(self, name: str) -> None:
        if name in self.variables:
            self.changes.append(VariableChange(name, self.variables.pop(name), None, "program"))

    def complete(self, step_id: str) -> None:
        if self.variables.get(done_name(step_id)) is not True:
            self.set(done_name(step_id), True)
            self.completed.append(step_id)

    def update(self, state: ProcedureState) -> ProcedureUpdate:
        return ProcedureUpdate(state, self.variables, tuple(self.changes), tuple(self.completed))


def unknown(condition: Expression, variables: Mapping[str, object]) -> bool:
    """Whether a condition's answer is unknown: it reads a variable that has no value yet.

    A condition that tests for the missing value itself (``exists``, ``== null``, a default)
    is never unknown.
    """
    if condition.null_aware:
        return False
    return any(variables.get(name) is None for name in condition.names)


def holds(condition: Expression, variables: Mapping[str, object]) -> bool:
    """An applicability condition's answer; unknown or undecidable (null) counts as holding.

    So a safety step guarded by data nobody has yet still applies.
    """
    if unknown(condition, variables):
        return True
    value = condition.evaluate(variables)
    return value is None or truthy(value)


def applies(step: ProcedureStep, variables: Mapping[str, object]) -> bool:
    """Whether the step's code conditions (group's and step's) hold; unknown means it applies."""
    return all(holds(c, variables) for c in step.applies)


def applies_reads(step: ProcedureStep) -> frozenset[str]:
    """The variables :func:`applies` reads for ``step``: its conditions' names."""
    return frozenset[str]().union(*(condition.names for condition in step.applies))


def step_state(step: ProcedureStep, variables: Mapping[str, object]) -> StepState:
    """Done, not applicable (judged ``proc_<id>_na`` or a code condition false) or open."""
    if variables.get(done_name(step.id)) is True:
        return "done"
    if variables.get(na_name(step.id)) is True or not applies(step, variables):
        return "not_applicable"
    return "open"


def ready(procs: CompiledProcedures, step: ProcedureStep, variables: Mapping[str, object]) -> bool:
    """Open, with every prerequisite done or not applicable."""
    if step_state(step, variables) != "open":
        return False
    return all(step_state(procs.steps[r], variables) != "open" for r in step.requires)


def armed_checklists(procs: CompiledProcedures, state: ProcedureState) -> tuple[str, ...]:
    """Checklists armed by the active scopes, innermost scope first."""
    keys: list[str] = []
    for scope in reversed(state.scopes):
        compiled = procs.scopes.get(scope)
        keys.extend(compiled.checklists if compiled else ())
    return tuple(dict.fromkeys(keys))


def armed_steps(procs: CompiledProcedures, state: ProcedureState) -> list[ProcedureStep]:
    """The steps of every armed checklist, in armed order (innermost scope first)."""
    return [s for k in armed_checklists(procs, state) for s in procs.checklist_steps(k)]


def _conditional_active(checklist: Checklist, variables: Mapping[str, object]) -> bool:
    return bool(checklist.condition) and all(holds(c, variables) for c in checklist.condition)


def current_step(
    procs: CompiledProcedures, state: ProcedureState, variables: Mapping[str, object]
) -> ProcedureStep | None:
    """The next ready step: an active conditional group first, then armed order."""
    keys = armed_checklists(procs, state)
    conditional = [k for k in keys if _conditional_active(procs.checklists[k], variables)]
    for key in (*conditional, *keys):
        for step in procs.checklist_steps(key):
            if ready(procs, step, variables):
                return step
    return None
