"""The procedure artifact as authors write it: checklists, step settings, monitor settings.

These pydantic models check shape only (unknown keys, wrong types, expressions that do not
parse, malformed ``result_path``). Cross-references (unknown step ids, cycles, tools the agent
lacks) are checked by :mod:`.validate`; the whole is compiled by :mod:`.compiler`.

When the prompt carries inline ``{{#step id}}`` blocks, ``steps`` is a sparse per-id settings
sidecar and every field but ``id`` is optional; without blocks it is the full step list.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pipecat_steward.core.expressions import parse_condition
from pipecat_steward.core.procedures.jsonpath import parse_path
from pipecat_steward.exceptions import ConfigError, ExpressionError

__all__ = [
    "STEP_ID",
    "AppliesWhen",
    "CodeApplies",
    "CompleteWhen",
    "FailMode",
    "GroupSettings",
    "JudgeCompletion",
    "LlmApplies",
    "MonitorSettings",
    "ProcedureConfig",
    "Severity",
    "StepSettings",
    "ToolCompletion",
    "VariableCompletion",
    "load_procedure_config",
]

STEP_ID = r"^[A-Za-z_][A-Za-z0-9_]*$"


class FailMode(StrEnum):
    """What an irreversible gate does when a judge prerequisite cannot be settled in time."""

    CLOSED = "closed"
    OPEN = "open"


class Severity(StrEnum):
    """The correction ladder's rungs (the monitor delivers them)."""

    NOTE = "note"
    NUDGE = "nudge"
    SEVERE = "severe"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_expression(text: str) -> str:
    try:
        parse_condition(text)
    except ExpressionError as exc:
        raise ValueError(exc.problem) from None
    return text


class VariableCompletion(_Model):
    """Done when a grammar expression over the variables holds."""

    kind: Literal["variable"]
    expr: str

    _expr = field_validator("expr")(_check_expression)


class ToolCompletion(_Model):
    """Done when a named tool returns success (optionally rendering a named component).

    Attributes:
        tool: The tool whose success completes the step; None with ``component`` means any
            tool that renders that component.
        result_statuses: Statuses that count as success instead of the generic rule, e.g.
            ``["pending", "capture_started", "succeeded"]`` for a step that starts an operation.
        result_path: A JSONPath such as ``$.data.entry[0].resource.id`` whose value must exist
            and be non-empty; an HTTP-successful empty result leaves the step open.
        component: The component the tool must render, e.g. ``AppointmentSummary``.
    """

    kind: Literal["tool"]
    tool: str | None = None
    result_statuses: tuple[str, ...] | None = None
    result_path: str | None = None
    component: str | None = None

    @field_validator("result_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None:
            parse_path(value)  # raises ValueError naming the problem
        return value

    @model_validator(mode="after")
    def _target(self) -> ToolCompletion:
        if self.tool is None and self.component is None:
            raise ValueError("a tool completion needs `tool` (or `component`); name the tool")
        return self


class JudgeCompletion(_Model):
    """Done when the monitor judges a plain-English criterion satisfied."""

    kind: Literal["judge"]
    prompt: str = Field(min_length=1)


CompleteWhen = Annotated[
    VariableCompletion | ToolCompletion | JudgeCompletion, Field(discriminator="kind")
]


class CodeApplies(_Model):
    """The step applies while this expression holds (evaluated live; fails open)."""

    kind: Literal["code"]
    expr: str

    _expr = field_validator("expr")(_check_expression)


class LlmApplies(_Model):
    """The monitor decides applicability from this prompt (sticks as ``proc_<id>_na``)."""

    kind: Literal["llm"]
    prompt: str = Field(min_length=1)


AppliesWhen = Annotated[CodeApplies | LlmApplies, Field(discriminator="kind")]


class StepSettings(_Model):
    """One step's settings; every field but ``id`` is optional in a sidecar.

    Attributes:
        requires: Prerequisite step ids; ``None`` = the previous step in document order,
            ``[]`` = any order.
        irreversible_fail_mode: ``closed`` (default) vetoes on a judge timeout, ``open`` allows.
        expects: Variables this step collects (they feed the extraction schema).
        repeatable: An irreversible step whose tool may run again once the step is done
            (without it, a repeat of the completing tool is vetoed: no double charge).
    """

    id: str = Field(pattern=STEP_ID)
    title: str | None = None
    guidance: str | None = None
    requires: tuple[str, ...] | None = None
    complete_when: CompleteWhen | None = None
    irreversible: bool = False
    irreversible_fail_mode: FailMode = FailMode.CLOSED
    applies_when: AppliesWhen | None = None
    expects: tuple[str, ...] = ()
    repeatable: bool = False


class MonitorSettings(_Model):
    """The monitor's settings for one checklist (the monitor itself lives in ``core/monitor``)."""

    enabled: bool = True
    max_corrections_per_step: int = Field(default=1, ge=0)
    severity_default: Severity = Severity.NOTE


class GroupSettings(_Model):
    """Settings of a named ``{{#procedure name}}`` group: its own checklist and budget.

    ``applies_when`` is code-only at group level (deterministic); it is stamped onto members,
    and both the step's and the group's conditions must hold.
    """

    title: str | None = None
    applies_when: CodeApplies | None = None
    monitor: MonitorSettings | None = None


class ProcedureConfig(_Model):
    """``procedure:`` of a scope (the main prompt or a topic)."""

    enabled: bool = True
    steps: tuple[StepSettings, ...] = ()
    monitor: MonitorSettings = Field(default_factory=MonitorSettings)
    groups: dict[str, GroupSettings] = Field(default_factory=lambda: {})


def load_procedure_config(
    raw: Mapping[str, object] | ProcedureConfig | None, path: str = "procedure"
) -> ProcedureConfig:
    """Validate a raw ``procedure:`` mapping.

    Args:
        raw: The mapping (``None`` gives the defaults).
        path: Its config path, prefixed to every error.

    Raises:
        ConfigError: Listing each problem at its path (``procedure.steps[2].complete_when``).
    """
    if isinstance(raw, ProcedureConfig):
        return raw
    try:
        return ProcedureConfig.model_validate(raw or {})
    except ValidationError as exc:
        lines = [f"{_loc(path, e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise ConfigError(path, "invalid procedure:\n  " + "\n  ".join(lines)) from None


def _loc(path: str, loc: tuple[int | str, ...]) -> str:
    out = path
    for part in loc:
        if part in ("variable", "tool", "judge", "code", "llm"):
            continue  # the discriminator's tag, not a key the author wrote
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out
