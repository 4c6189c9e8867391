"""Checking a verdict before anything applies it: the model proposes, code decides.

:func:`check_verdict` turns the SLM's raw object into :class:`Checked` (what may be applied)
or :class:`Discarded` (nothing applies):

- a verdict naming a step the request did not show, or citing an evidence id the request did
  not contain, is discarded whole (models invent plausible ids);
- ``satisfied`` counts only for a requested judge requirement with a ``satisfied`` assessment
  citing real evidence ids; missing evidence, ``unknown`` and contradictions (a step both
  satisfied and not, or both satisfied and not applicable) leave the step unknown;
- prerequisites and applicability are checked again against the live blackboard;
- ``not_applicable`` counts only for requested steps with an ``llm`` applicability condition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pipecat_steward.core.monitor.request import VIOLATION_KINDS, AssessmentRequest
from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.completion import Verdict
from pipecat_steward.core.procedures.state import (
    ProcedureViolation,
    ViolationKind,
    ready,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep

__all__ = [
    "Assessment",
    "CheckResult",
    "Checked",
    "Discarded",
    "RawVerdict",
    "check_verdict",
    "parse_verdict",
]

_SUGGESTION_LIMIT = 300


@dataclass(frozen=True, slots=True)
class Assessment:
    """One requirement's assessment as the model reported it."""

    step: str
    status: str
    evidence_ids: tuple[str, ...]
    missing: str | None


@dataclass(frozen=True, slots=True)
class RawVerdict:
    """The model's verdict, parsed but not yet trusted."""

    reasoning: str
    current_step: str | None
    satisfied: tuple[str, ...]
    assessments: tuple[Assessment, ...]
    violation_kind: str
    violation_step: str | None
    violation_detail: str
    not_applicable: tuple[str, ...]
    suggested_correction: str | None

    def named_steps(self) -> set[str]:
        """Every step id the verdict names."""
        named = {*self.satisfied, *self.not_applicable, *(a.step for a in self.assessments)}
        named |= {s for s in (self.current_step, self.violation_step) if s}
        return named

    def cited(self) -> set[str]:
        """Every evidence id the verdict cites."""
        return {e for a in self.assessments for e in a.evidence_ids}


@dataclass(frozen=True, slots=True)
class Checked:
    """An accepted verdict.

    Attributes:
        verdict: What to apply (``apply_verdict`` re-checks again).
        unknown: Requirements left unknown (no evidence, contradictions, prerequisites).
        missing: What the model said is missing, per requirement.
        suggestion: The model's suggested correction, trimmed.
        reasoning: The model's rationale (logged).
    """

    verdict: Verdict
    unknown: tuple[str, ...] = ()
    missing: Mapping[str, str] | None = None
    suggestion: str | None = None
    reasoning: str = ""


@dataclass(frozen=True, slots=True)
class Discarded:
    """A verdict that applies nothing; ``why`` says which rule voided it."""

    why: str


CheckResult = Checked | Discarded


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError("expected a list")
    return tuple(str(v) for v in cast(list[object], value))


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _assessment(raw: object) -> Assessment:
    item = cast(Mapping[str, object], raw)
    return Assessment(
        str(item["step"]),
        str(item["status"]),
        _strings(item["evidence_ids"]),
        _text(item.get("missing")),
    )


def parse_verdict(raw: Mapping[str, object]) -> RawVerdict | Discarded:
    """Parse the model's object; anything malformed is :class:`Discarded`."""
    try:
        violation = cast(Mapping[str, object], raw["violation"])
        return RawVerdict(
            reasoning=_text(raw.get("reasoning")) or "",
            current_step=_text(raw.get("current_step")),
            satisfied=_strings(raw["satisfied"]),
            assessments=tuple(_assessment(a) for a in cast(list[object], raw["assessments"])),
            violation_kind=str(violation["kind"]),
            violation_step=_text(violation.get("step")),
            violation_detail=_text(violation.get("detail")) or "",
            not_applicable=_strings(raw.get("not_applicable", [])),
            suggested_correction=_text(raw.get("suggested_correction")),
        )
    except (KeyError, TypeError, AttributeError):
        return Discarded("malformed verdict")


def check_verdict(
    raw: Mapping[str, object],
    request: AssessmentRequest,
    procs: CompiledProcedures,
    variables: Mapping[str, object],
) -> CheckResult:
    """Validate ``raw`` against the request it answers and the live blackboard."""
    parsed = parse_verdict(raw)
    if isinstance(parsed, Discarded):
        return parsed
    undeclared = sorted(parsed.named_steps() - request.shown)
    if undeclared:
        return Discarded(f"names undeclared step {undeclared[0]!r}")
    invented = sorted(parsed.cited() - request.evidence_ids)
    if invented:
        return Discarded(f"cites unknown evidence id {invented[0]!r}")
    if parsed.violation_kind not in VIOLATION_KINDS:
        return Discarded(f"unknown violation kind {parsed.violation_kind!r}")
    return _accept(parsed, request, procs, variables)


def _accept(
    parsed: RawVerdict,
    request: AssessmentRequest,
    procs: CompiledProcedures,
    variables: Mapping[str, object],
) -> Checked:
    claimed_done = _required(parsed.satisfied, request, procs)
    claimed_na = _required(parsed.not_applicable, request, procs)
    satisfied = tuple(s.id for s in claimed_done if _satisfied(s, parsed, procs, variables))
    na = tuple(s.id for s in claimed_na if _not_applicable(s, parsed, variables))
    unknown = tuple(s for s in request.requirements if s not in satisfied and s not in na)
    missing = {a.step: a.missing for a in parsed.assessments if a.missing}
    verdict = Verdict(satisfied, na, _violation(parsed, satisfied))
    suggestion = (parsed.suggested_correction or "")[:_SUGGESTION_LIMIT] or None
    return Checked(verdict, unknown, missing, suggestion, parsed.reasoning)


def _statuses(parsed: RawVerdict, step: str) -> Sequence[Assessment]:
    return [a for a in parsed.assessments if a.step == step]


def _required(
    claimed: Sequence[str], request: AssessmentRequest, procs: CompiledProcedures
) -> tuple[ProcedureStep, ...]:
    """The claimed steps the request asked about, once each, in claim order."""
    return tuple(procs.steps[s] for s in dict.fromkeys(claimed) if s in request.requirements)


def _satisfied(
    step: ProcedureStep, parsed: RawVerdict, procs: CompiledProcedures, variables: Mapping[str, object]
) -> bool:
    """A judge step the model cited evidence for, not also called n/a, and ready now."""
    mine = _statuses(parsed, step.id)
    cited = all(a.status == "satisfied" and a.evidence_ids for a in mine)
    return (
        step.kind == "judge"
        and bool(mine)
        and cited
        and step.id not in parsed.not_applicable
        and ready(procs, step, variables)
    )


def _not_applicable(step: ProcedureStep, parsed: RawVerdict, variables: Mapping[str, object]) -> bool:
    """A step whose applicability the model judges, not also called done, still open."""
    return (
        step.applies_llm is not None
        and step.id not in parsed.satisfied
        and step_state(step, variables) == "open"
    )


def _violation(parsed: RawVerdict, satisfied: tuple[str, ...]) -> ProcedureViolation | None:
    if parsed.violation_kind == "none":
        return None
    if parsed.violation_step in satisfied:
        return None  # the verdict contradicts itself: the step is both done and violated
    kind = cast(ViolationKind, parsed.violation_kind)
    return ProcedureViolation(kind, parsed.violation_step, parsed.violation_detail)
