"""The correction ladder: from a checked finding to at most one correction, or none.

Rules:

- a violation needs the same ``(kind, step)`` on two consecutive checks (corroboration);
- ``off_procedure`` is recorded, never corrected;
- severity ``note`` / ``nudge`` is queued and delivered at the caller's next final transcript
  (or rides the next tool result), expiring after 60 s; ``severe`` — a hallucinated completion
  of an unfired irreversible step — is delivered now;
- ``max_corrections_per_step`` caps corrections per step (0 = observe only); an identical
  correction is never issued twice;
- findings are re-checked against live state before the budget is spent and again at
  delivery: a completed, inactive or inapplicable step produces no correction, and a note
  from an earlier topic visit is void.

Pure: times are parameters; every function returns a new :class:`LadderState`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.model import Severity
from pipecat_steward.core.procedures.state import (
    ProcedureView,
    ProcedureViolation,
    ViolationKind,
    armed_checklists,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep

__all__ = [
    "NOTE_TTL_S",
    "PREFIX",
    "Correction",
    "Deliver",
    "LadderOutcome",
    "LadderState",
    "Observe",
    "correction_for",
    "correction_text",
    "grant",
    "on_finding",
    "still_valid",
    "take_due",
]

NOTE_TTL_S = 60.0
PREFIX = "[Procedure check]"
_GUIDANCE_LIMIT = 300


@dataclass(frozen=True, slots=True)
class Correction:
    """One correction for the agent, owned by its step's checklist and topic visit."""

    step: str
    checklist: str
    kind: ViolationKind | None
    severity: Severity
    text: str
    created_at: float
    expires_at: float
    visit: int

    @property
    def keys(self) -> tuple[str, str]:
        """Dedup keys: the (kind, step) pair and the normalised text."""
        return f"{self.kind}:{self.step}", re.sub(r"\W+", " ", self.text.lower()).strip()


@dataclass(frozen=True, slots=True)
class LadderState:
    """Corroboration memory, budgets spent, corrections issued and the note queue."""

    last: tuple[str, str | None] | None = None
    spent: tuple[tuple[str, int], ...] = ()
    issued: frozenset[str] = frozenset()
    queue: tuple[Correction, ...] = ()

    def spent_on(self, step: str) -> int:
        """Corrections already delivered for ``step``."""
        return next((n for s, n in self.spent if s == step), 0)


@dataclass(frozen=True, slots=True)
class Observe:
    """Recorded, not corrected; ``why`` names the rule."""

    why: str


@dataclass(frozen=True, slots=True)
class Deliver:
    """Deliver ``correction``, either ``"now"`` or ``"queued"``.

    Now for a severe finding (interrupt first); queued for the caller's next final transcript
    (or the next tool result), where :func:`take_due` hands it out.
    """

    correction: Correction
    when: Literal["now", "queued"]


LadderOutcome = Observe | Deliver

_TEMPLATES: Mapping[ViolationKind, str] = {
    "skipped_step": "The step '{title}' is not complete; do not move past it.",
    "hallucination": "You spoke as if '{title}' were done, but the platform has no record of "
    "it. Do not claim it is done.",
    "premature_action": "You acted before '{title}' was complete; finish it first.",
    "off_procedure": "Return to the procedure step '{title}'.",
}


def correction_text(
    kind: ViolationKind | None, step: ProcedureStep, suggestion: str | None = None
) -> str:
    """The note the agent reads: what is wrong, then the step's authored guidance."""
    head = _TEMPLATES[kind] if kind else "You said you would act on '{title}' but nothing ran."
    guidance = step.short_guidance[:_GUIDANCE_LIMIT] or (suggestion or "")[:_GUIDANCE_LIMIT]
    tail = f" Next: {guidance}" if guidance else ""
    return f"{PREFIX} {head.format(title=step.title)}{tail}"


def correction_for(
    step: ProcedureStep,
    kind: ViolationKind | None,
    severity: Severity,
    now: float,
    visit: int,
    suggestion: str | None = None,
) -> Correction:
    """A correction of ``step`` made ``now``, worded by :func:`correction_text`.

    It belongs to the step's checklist and the topic ``visit``, and expires ``NOTE_TTL_S`` later.
    """
    text = correction_text(kind, step, suggestion)
    return Correction(step.id, step.checklist, kind, severity, text, now, now + NOTE_TTL_S, visit)


def _open_and_armed(view: ProcedureView, step: str) -> bool:
    s = view.procs.steps.get(step)
    return (
        s is not None
        and s.checklist in armed_checklists(view.procs, view.state)
        and step_state(s, view.variables) == "open"
    )


def still_valid(correction: Correction, view: ProcedureView, now: float) -> bool:
    """Whether a correction may still be delivered: same visit, unexpired, step still open."""
    return (
        correction.visit == view.state.visit
        and now <= correction.expires_at
        and _open_and_armed(view, correction.step)
    )


def _allowed(ladder: LadderState, procs: CompiledProcedures, c: Correction) -> str | None:
    settings = procs.checklists[c.checklist].monitor
    if not settings.enabled:
        return "monitor disabled"
    if ladder.spent_on(c.step) >= settings.max_corrections_per_step:
        return "correction budget spent" if settings.max_corrections_per_step else "observe only"
    if any(k in ladder.issued for k in c.keys):
        return "identical correction already issued"
    return None


def _spend(ladder: LadderState, c: Correction) -> LadderState:
    spent = tuple((s, n) for s, n in ladder.spent if s != c.step)
    return replace(
        ladder,
        spent=(*spent, (c.step, ladder.spent_on(c.step) + 1)),
        issued=ladder.issued | set(c.keys),
    )


def grant(
    ladder: LadderState, correction: Correction, view: ProcedureView, now: float
) -> tuple[LadderState, bool]:
    """Re-check ``correction`` against live state and the budget; spend it if it may go out."""
    if not still_valid(correction, view, now):
        return ladder, False
    if _allowed(ladder, view.procs, correction) is not None:
        return ladder, False
    return _spend(ladder, correction), True


def _severity(procs: CompiledProcedures, step: ProcedureStep, kind: ViolationKind) -> Severity:
    default = procs.checklists[step.checklist].monitor.severity_default
    if kind == "hallucination" and step.irreversible:
        return Severity.SEVERE  # claimed completion of an irreversible step that never fired
    return Severity.NUDGE if default is Severity.SEVERE else default


def on_finding(
    ladder: LadderState,
    violation: ProcedureViolation | None,
    view: ProcedureView,
    now: float,
    suggestion: str | None = None,
) -> tuple[LadderState, LadderOutcome | None]:
    """Climb the ladder with one check's finding (``None``: the check found nothing)."""
    if violation is None:
        return replace(ladder, last=None), None
    key = (violation.kind, violation.step)
    corroborated, ladder = ladder.last == key, replace(ladder, last=key)
    if violation.kind == "off_procedure":
        return ladder, Observe("off_procedure is recorded, never corrected")
    if not corroborated:
        return ladder, Observe("needs the same finding on the next check")
    owner = view.procs.steps.get(violation.step or "") or view.current()
    if owner is None or not _open_and_armed(view, owner.id):
        return ladder, Observe("step is no longer open")
    severity = _severity(view.procs, owner, violation.kind)
    c = correction_for(owner, violation.kind, severity, now, view.state.visit, suggestion)
    return _route(ladder, c, view.procs)


def _route(
    ladder: LadderState, c: Correction, procs: CompiledProcedures
) -> tuple[LadderState, LadderOutcome]:
    why = _allowed(ladder, procs, c)
    if why is None and any(set(q.keys) & set(c.keys) for q in ladder.queue):
        why = "identical correction already queued"
    if why is not None:
        return ladder, Observe(why)
    if c.severity is Severity.SEVERE:
        return _spend(ladder, c), Deliver(c, "now")
    return replace(ladder, queue=(*ladder.queue, c)), Deliver(c, "queued")


def take_due(
    ladder: LadderState, view: ProcedureView, now: float
) -> tuple[LadderState, Correction | None]:
    """At most one queued correction still valid now (one correction = one turn).

    Expired notes, notes of an earlier topic visit and notes whose step is no longer open are
    dropped; the one returned is spent.
    """
    live = tuple(c for c in ladder.queue if still_valid(c, view, now))
    ladder = replace(ladder, queue=live)
    for c in live:
        rest = replace(ladder, queue=tuple(q for q in live if q is not c))
        granted, ok = grant(rest, c, view, now)
        if ok:
            return granted, c
        ladder = rest
    return ladder, None
