"""Compiled steps: a scanned block (or a config-only entry) merged with its sparse settings."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, Literal

from pipecat_steward.core.expressions import Expression, parse_condition
from pipecat_steward.core.procedures.blocks import Ref, ScannedStep, render_nodes
from pipecat_steward.core.procedures.model import (
    CodeApplies,
    FailMode,
    JudgeCompletion,
    LlmApplies,
    StepSettings,
    ToolCompletion,
    VariableCompletion,
)

__all__ = [
    "CompletionCriterion",
    "CompletionKind",
    "ProcedureStep",
    "build_step",
    "humanize",
    "normalize",
]

GUIDANCE_LIMIT = 900
_SPACE = re.compile(r"\s+")


CompletionKind = Literal["variable", "tool", "judge"]
"""How a step completes: a variable condition, a tool success, or a judge verdict."""


@dataclass(frozen=True, slots=True)
class CompletionCriterion:
    """How a step completes: what the authored setting (or the body) says.

    Attributes:
        kind: A variable condition, a tool success or a judge verdict.
        expr: The ``variable`` condition.
        tool: The ``tool`` step's tool (None: any tool rendering ``component``).
        component: The component a ``tool`` step's call must render, if any.
        result_statuses: Statuses that count as success instead of the generic rule.
        result_path: A JSONPath whose value must exist and be non-empty in the result.
        judge: The ``judge`` criterion.
        inferred: Whether the completion was inferred from the body (no authored setting).
    """

    kind: CompletionKind
    expr: Expression | None = None
    tool: str | None = None
    component: str | None = None
    result_statuses: tuple[str, ...] | None = None
    result_path: str | None = None
    judge: str | None = None
    inferred: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcedureStep(CompletionCriterion):
    """One compiled step: its place, guidance and settings over its completion criterion.

    Attributes:
        checklist: The key of the checklist it belongs to (``scope:<name>`` or ``group:<name>``).
        requires: Prerequisite ids within the same checklist (default: the previous step).
        applies: Code conditions that must all hold (the group's first, then the step's).
        applies_llm: The monitor-assessed applicability prompt.
        path: The config path errors about this step name.
    """

    id: str
    title: str
    guidance: str
    checklist: str
    group: str | None
    scope: str
    requires: tuple[str, ...]
    irreversible: bool = False
    fail_mode: FailMode = FailMode.CLOSED
    applies: tuple[Expression, ...] = ()
    applies_llm: str | None = None
    expects: tuple[str, ...] = ()
    repeatable: bool = False
    path: str = ""

    @property
    def deterministic(self) -> bool:
        """True for variable and tool steps, which complete with no model call."""
        return self.kind != "judge"

    @property
    def short_guidance(self) -> str:
        """The guidance, whitespace-normalised and cut at 900 characters."""
        return normalize(self.guidance)[:GUIDANCE_LIMIT].rstrip()


def normalize(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _SPACE.sub(" ", text).strip()


def humanize(step_id: str) -> str:
    """``confirm_identity`` → ``Confirm identity`` (the default title)."""
    words = step_id.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def block_guidance(block: ScannedStep) -> str:
    """A block body as guidance: pills as names, references as the group's name."""
    return render_nodes(block.nodes, lambda ref: _ref_name(ref)).strip()


def _ref_name(ref: Ref) -> str:
    return f"the {ref.name} procedure"


def build_step(
    *,
    step_id: str,
    body: str,
    settings: StepSettings | None,
    pills: tuple[tuple[str, ...], tuple[str, ...]],
    where: tuple[str, str | None, str, str],
    requires: tuple[str, ...],
) -> ProcedureStep:
    """Merge a step's body and sparse settings into a compiled step.

    Args:
        step_id: The step id.
        body: Its guidance (the block body, or the config ``guidance``).
        settings: The sidecar entry for this id, if any.
        pills: The TOOL and COMPONENT pill names in the body.
        where: ``(checklist key, group, scope, config path)``.
        requires: The resolved prerequisites (the caller applies the default).
    """
    s = settings or StepSettings(id=step_id)
    checklist, group, scope, path = where
    c = _completion(s, body, pills)
    code = s.applies_when if isinstance(s.applies_when, CodeApplies) else None
    applies = (parse_condition(code.expr),) if code else ()
    llm = s.applies_when.prompt if isinstance(s.applies_when, LlmApplies) else None
    return ProcedureStep(
        **_criterion_fields(c),
        id=step_id,
        title=s.title or humanize(step_id),
        guidance=body,
        checklist=checklist,
        group=group,
        scope=scope,
        requires=requires,
        irreversible=s.irreversible,
        fail_mode=s.irreversible_fail_mode,
        applies=applies,
        applies_llm=llm,
        expects=s.expects,
        repeatable=s.repeatable,
        path=path,
    )


def _criterion_fields(c: CompletionCriterion) -> dict[str, Any]:
    """The criterion's fields by name, to extend into a step (a step is a criterion)."""
    return {f.name: getattr(c, f.name) for f in fields(c)}


def _completion(
    s: StepSettings, body: str, pills: tuple[tuple[str, ...], tuple[str, ...]]
) -> CompletionCriterion:
    match s.complete_when:
        case VariableCompletion(expr=expr):
            return CompletionCriterion("variable", expr=parse_condition(expr))
        case ToolCompletion() as done:
            return CompletionCriterion(
                "tool",
                tool=done.tool,
                component=done.component,
                result_statuses=done.result_statuses,
                result_path=done.result_path,
            )
        case JudgeCompletion(prompt=prompt):
            return CompletionCriterion("judge", judge=prompt)
        case None:
            return _inferred(s, body, pills)


def _inferred(
    s: StepSettings, body: str, pills: tuple[tuple[str, ...], tuple[str, ...]]
) -> CompletionCriterion:
    tools, components = (tuple(dict.fromkeys(p)) for p in pills)
    if len(tools) <= 1 and len(components) <= 1 and (tools or components):
        tool = tools[0] if tools else None
        component = components[0] if components else None
        return CompletionCriterion("tool", tool=tool, component=component, inferred=True)
    criterion = normalize(body) or s.title or humanize(s.id)
    return CompletionCriterion("judge", judge=criterion, inferred=True)
