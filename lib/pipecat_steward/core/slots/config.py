"""The slot-filling config as users write it: slots, tasks, retries, stalls, channels, events.

These pydantic models check the shape of each entry (unknown keys, wrong types). The
cross-references between entries (unknown slots, cycles, clashes) are checked by
``validate.py`` and the whole is compiled by ``compiled.py``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from pipecat_steward.core.slots.sources import SOURCE_FIX, SlotSource, parse_source
from pipecat_steward.core.variables import JsonValue, VariableType

__all__ = [
    "ConfirmBefore",
    "FlowConfig",
    "OnExhaust",
    "OnFailure",
    "OnInputDeclined",
    "ReadbackSpec",
    "ResponsePart",
    "SlotConfig",
    "SteerBackConfig",
    "TaskConfig",
    "ThenCall",
    "ValidateAgainst",
    "Validation",
]

ResponsePart = dict[str, JsonValue]
"""A rich response part: ``{"type": "text" | "payload" | "audio" | "end_session" | "transfer", …}``."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ThenCall(_Model):
    """A tool call made on exhaustion: ``{"tool": …, "args": {…}}`` (args may hold ``{slot}``)."""

    tool: str
    args: dict[str, JsonValue] = Field(default_factory=lambda: {})


class OnExhaust(_Model):
    """What to say and call when retries run out."""

    say: str = ""
    then: str | ThenCall | None = None
    response: list[ResponsePart] | None = None
    channel_responses: dict[str, list[ResponsePart]] = Field(default_factory=lambda: {})


class Validation(_Model):
    """Setter validation errors of a slot: how many the caller may make before an escalation."""

    max_retries: int = Field(default=3, ge=1)
    errors: dict[str, str] = Field(default_factory=lambda: {})
    error_responses: dict[str, list[ResponsePart]] = Field(default_factory=lambda: {})
    channel_error_responses: dict[str, dict[str, list[ResponsePart]]] = Field(
        default_factory=lambda: {}
    )
    on_exhaust: OnExhaust = Field(default_factory=OnExhaust)


class ValidateAgainst(_Model):
    """Cross-slot validation: the setter's ``response_field`` must be one of a filled slot's comma-separated options."""

    response_field: str = "value"
    filled_slot: str
    error_code: str = "not_available"


class ReadbackSpec(_Model):
    """A dict readback format: ``plural``, ``prefix`` or ``none_sub``."""

    type: Literal["plural", "prefix", "none_sub"]
    one: str = ""
    other: str = ""
    text: str = ""
    none_values: tuple[str, ...] = ("none", "no", "nothing", "n/a", "na", "")


class SlotConfig(_Model):
    """One slot: what is asked, where its value may come from, and how it is read back."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    source: str | list[str] = "user"
    event_key: str | None = None
    setter: str | None = None
    setter_field: str | None = None
    ask: str = ""
    label: str = ""
    hint: str = ""
    requires: list[str] = Field(default_factory=lambda: [])
    requires_readback: bool = False
    readback_fmt: str | ReadbackSpec | None = None
    condition: str | None = None
    validate_against: ValidateAgainst | None = None
    validation: Validation = Field(default_factory=Validation)
    message: str = ""
    preempt: bool = True
    response: list[ResponsePart] | None = None
    channel_responses: dict[str, list[ResponsePart]] = Field(default_factory=lambda: {})
    required: bool = True
    default: JsonValue = None
    type: VariableType | None = None
    values: list[str] = Field(default_factory=lambda: [])

    _sources: tuple[SlotSource, ...] = PrivateAttr(default=())
    _unknown_sources: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("source")
    @classmethod
    def _sources_are_lists(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError(f"source list is empty; {SOURCE_FIX}")
        return value

    def model_post_init(self, context: object, /) -> None:
        """Parse ``source`` once; a spelling that names no source is kept for ``check_flow``."""
        texts = (self.source,) if isinstance(self.source, str) else tuple(self.source)
        parsed = [(text, parse_source(text)) for text in texts]
        self._sources = tuple(s for _, s in parsed if s is not None)
        self._unknown_sources = tuple(t for t, s in parsed if s is None)

    @property
    def sources(self) -> tuple[SlotSource, ...]:
        """The slot's sources, parsed (``check_flow`` reports ``unknown_sources``)."""
        return self._sources

    @property
    def unknown_sources(self) -> tuple[str, ...]:
        """What ``source`` holds that names no source."""
        return self._unknown_sources


class OnFailure(_Model):
    """Task retry and escalation."""

    retry_say: str = ""
    retry_response: list[ResponsePart] | None = None
    channel_retry_response: dict[str, list[ResponsePart]] = Field(default_factory=lambda: {})
    max_retries: int = Field(default=1, ge=1)
    clear_slots: list[str] = Field(default_factory=lambda: [])
    on_exhaust: OnExhaust = Field(default_factory=OnExhaust)


class OnInputDeclined(_Model):
    """What happens when the caller declines a required input of a task."""

    say: str = (
        "I can't complete this without {declined}. I'll pass you to a colleague with what we "
        "have so far: {summary}."
    )
    then: str | ThenCall | None = None


class ConfirmBefore(_Model):
    """A final read-back of a whole terminal or irreversible task before it fires.

    Attributes:
        say: The question; ``{summary}`` is every input the task will use, formatted as in a
            readback, in input order.
        ask_optional: Ask each optional input the caller has not been asked yet (once) before
            the summary.
    """

    say: str = "Before I go ahead: {summary}. Shall I go ahead?"
    ask_optional: bool = True


class TaskConfig(_Model):
    """One backend task: its inputs, its executor and what follows success or failure."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    tool: str
    inputs: list[str] = Field(default_factory=lambda: [])
    requires: list[str] = Field(default_factory=lambda: [])
    outputs: dict[str, str] = Field(default_factory=lambda: {})
    success_check: str | None = "success"
    terminal: bool = False
    readback_inputs: bool = False
    irreversible: bool = False
    confirm_before: bool | ConfirmBefore = False
    rerun_on_new_input: bool = False
    """Run again when a new value fills one of its inputs after it ran (a search that must
    take a constraint the caller adds); by default only a correction re-runs a task."""
    then_say: str = ""
    then_response: list[ResponsePart] | None = None
    channel_then_response: dict[str, list[ResponsePart]] = Field(default_factory=lambda: {})
    condition: str | None = None
    on_failure: OnFailure = Field(default_factory=OnFailure)
    on_input_declined: OnInputDeclined = Field(default_factory=OnInputDeclined)
    timeout_s: float = Field(default=10.0, gt=0)
    """Deadline of one execution; on expiry the task takes its failure path (late result ignored)."""


class SteerBackConfig(_Model):
    """Three-tier stall recovery: soft directive, hard preempt, escalation."""

    soft_after: int = Field(default=2, ge=1)
    hard_after: int = Field(default=4, ge=1)
    escalate_after: int = Field(default=6, ge=1)
    directive: str = "The conversation has drifted — steer back. {question}"
    on_exhaust: OnExhaust = Field(
        default_factory=lambda: OnExhaust(
            say="I'm having trouble completing this. Let me get someone to help you directly."
        )
    )


class FlowConfig(_Model):
    """A whole slot-filling flow."""

    slots: list[SlotConfig]
    tasks: list[TaskConfig] = Field(default_factory=lambda: [])
    steer_back: SteerBackConfig = Field(default_factory=SteerBackConfig)
    confirm_transition_prefix: list[str] = Field(
        default_factory=lambda: ["Wonderful!", "Perfect!", "Great!"]
    )
    readback_template: str = "Just to confirm — {items}. Is that correct?"
    gate_slot: str | None = None
    ask_together: list[list[str]] = Field(default_factory=lambda: [])
    stall_escape_after: int | None = Field(default=None, ge=1)
    handover: str | ThenCall | None = None
    """The hand-over tool: called on an escalation whose exit names no ``then`` of its own, and
    on a ``transfer`` response part (args may hold ``{slot}`` and ``{summary}``)."""
    stall_escape_say: str = "Let me hand you to a colleague with what we have so far: {summary}."
