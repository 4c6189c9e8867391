"""The assessment request: the strict verdict schema and the evidence the SLM reads.

The request shows every armed step as state (done / CURRENT / upcoming / not applicable) but
asks the model to judge at most three eligible requirements; deterministic steps are marked as
completing by themselves, so the model is never invited to complete them. Evidence is rendered
in sections: platform facts (authoritative), tool results, application messages, dialogue —
each line carrying its evidence id and source label. The request's cache key is
``(procedure state hash, transcript tail, evidence revision)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipecat_steward.core.monitor.evidence import EvidenceEntry, EvidenceLedger
from pipecat_steward.core.monitor.policy import AssessReason
from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.state import (
    ProcedureState,
    ProcedureView,
    armed_steps,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep

__all__ = [
    "VERDICT_SCHEMA",
    "VIOLATION_KINDS",
    "AssessmentRequest",
    "CacheKey",
    "build_request",
    "cache_key",
    "state_hash",
]

VIOLATION_KINDS = ("none", "skipped_step", "hallucination", "off_procedure", "premature_action")
_NULLABLE_TEXT: dict[str, Any] = {"type": ["string", "null"]}
_IDS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

VERDICT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": _NULLABLE_TEXT,
        "current_step": _NULLABLE_TEXT,
        "satisfied": _IDS,
        "assessments": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "step": {"type": "string"},
                    "status": {"type": "string", "enum": ["satisfied", "unsatisfied", "unknown"]},
                    "evidence_ids": _IDS,
                    "missing": _NULLABLE_TEXT,
                },
                "required": ["step", "status", "evidence_ids", "missing"],
                "additionalProperties": False,
            },
        },
        "violation": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": list(VIOLATION_KINDS)},
                "step": _NULLABLE_TEXT,
                "detail": _NULLABLE_TEXT,
            },
            "required": ["kind", "step", "detail"],
            "additionalProperties": False,
        },
        "not_applicable": _IDS,
        "suggested_correction": _NULLABLE_TEXT,
    },
    "required": [
        "reasoning",
        "current_step",
        "satisfied",
        "assessments",
        "violation",
        "not_applicable",
        "suggested_correction",
    ],
    "additionalProperties": False,
}
"""The strict verdict schema; ``reasoning`` comes first (a small model that writes its
rationale before the verdict is markedly more accurate)."""

CacheKey = tuple[str, tuple[str, ...], int]
"""``(procedure state hash, transcript tail, evidence revision)``."""


@dataclass(frozen=True, slots=True)
class AssessmentRequest:
    """One assessment to send.

    Attributes:
        requirements: The judge requirements asked about (at most three).
        shown: Every step id the request shows (what a verdict may name).
        evidence_ids: Every evidence id the request shows (what a verdict may cite).
        user: The user message (steps, requirements, evidence).
        key: The cache key.
        visit: The topic visit the request belongs to (a later visit voids its verdict).
        reason: Why it was made.
    """

    requirements: tuple[str, ...]
    shown: frozenset[str]
    evidence_ids: frozenset[str]
    user: str
    key: CacheKey
    visit: int
    reason: AssessReason


def state_hash(state: ProcedureState, variables: Mapping[str, object]) -> str:
    """A short hash of the procedure state and every ``proc_*`` variable."""
    procs = sorted((k, repr(v)) for k, v in variables.items() if k.startswith("proc_"))
    text = repr((state.scopes, state.visit, procs))
    return hashlib.blake2s(text.encode(), digest_size=8).hexdigest()


def cache_key(
    state: ProcedureState,
    variables: Mapping[str, object],
    ledger: EvidenceLedger,
    requirements: tuple[str, ...] = (),
) -> CacheKey:
    """The cache key of an assessment over this state and evidence."""
    return (
        state_hash(state, variables) + "/" + ",".join(requirements),
        ledger.tail(),
        ledger.revision,
    )


def build_request(
    view: ProcedureView,
    ledger: EvidenceLedger,
    requirements: tuple[str, ...],
    reason: AssessReason,
) -> AssessmentRequest:
    """Build the request for ``requirements`` over the armed checklists and the ledger."""
    steps = armed_steps(view.procs, view.state)
    parts = [
        _checklist(steps, view.current(), view.variables),
        _requirements(view.procs, requirements),
        _evidence(ledger),
    ]
    return AssessmentRequest(
        requirements=requirements,
        shown=frozenset(s.id for s in steps),
        evidence_ids=ledger.ids,
        user="\n\n".join(p for p in parts if p),
        key=cache_key(view.state, view.variables, ledger, requirements),
        visit=view.state.visit,
        reason=reason,
    )


def _mark(
    step: ProcedureStep, current: ProcedureStep | None, variables: Mapping[str, object]
) -> str:
    match step_state(step, variables):
        case "done":
            return "done (do not judge)"
        case "not_applicable":
            return "not applicable"
        case "open":
            return "CURRENT" if current is not None and step.id == current.id else "upcoming"


def _checklist(
    steps: list[ProcedureStep], current: ProcedureStep | None, variables: Mapping[str, object]
) -> str:
    lines = ["Procedure (in order):"]
    for step in steps:
        auto = "" if step.kind == "judge" else "; completes automatically"
        lines.append(f"- {step.id} [{_mark(step, current, variables)}{auto}]: {step.title}")
    return "\n".join(lines)


def _requirements(procs: CompiledProcedures, requirements: tuple[str, ...]) -> str:
    if not requirements:
        return "Requirements to judge: none. Only report a violation, if any."
    lines = ["Requirements to judge (cite evidence ids for each):"]
    for step_id in requirements:
        step = procs.steps[step_id]
        if step.kind == "judge" and step.judge:
            lines.append(f"- {step_id}: satisfied when {step.judge}")
        if step.applies_llm:
            lines.append(
                f"- {step_id}: applies only when {step.applies_llm} "
                "(list it in not_applicable when it clearly does not apply)"
            )
    return "\n".join(lines)


_SECTIONS = (
    ("Platform facts (authoritative; a fact outranks anything said):", "variable"),
    ("Tool results (platform-reported):", "tool"),
    ("Application messages:", "application"),
    ("Dialogue (oldest first):", "utterance"),
)


def _evidence(ledger: EvidenceLedger) -> str:
    entries = (*ledger.observations, *ledger.messages, *ledger.utterances)
    blocks: list[str] = []
    for title, kind in _SECTIONS:
        lines = [_line(e) for e in entries if e.kind == kind]
        if lines:
            blocks.append("\n".join([title, *lines]))
    return "\n\n".join(blocks) or "No evidence yet."


def _line(entry: EvidenceEntry) -> str:
    return f"[{entry.id}] {entry.source}: {entry.text}"
