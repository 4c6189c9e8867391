"""The conversation event schema: what the studio, the store and the client see of a call.

Every event carries ``schema_version``, ``session`` (the conversation id), ``seq`` (its position
in the session, from 1, gap-free), ``t`` (seconds since the call started), ``turn`` (the caller
turn it belongs to; 0 before the first) and ``kind``, the tag of the union. Texts and values are
redacted before an event is built (sensitive values never reach an event).

Compatibility rule: within one ``schema_version`` changes are additive only (a new kind, or a
new field with a default). Renaming or removing a field, or changing its meaning, bumps
``SCHEMA_VERSION``. Readers ignore kinds they do not know (see ``parse_event_or_none``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

__all__ = [
    "SCHEMA_VERSION",
    "BotUtteranceEvent",
    "CallEnded",
    "CallStarted",
    "CallerTranscript",
    "ChecklistStatus",
    "ChecklistStep",
    "CheckpointEvent",
    "CorrectionEvent",
    "DebugEvent",
    "EngineDecision",
    "Event",
    "EventBase",
    "GateDecision",
    "MonitorCheck",
    "PayloadEvent",
    "SlotChange",
    "ToolCallEvent",
    "ToolResultEvent",
    "TransactionEvent",
    "TurnEnded",
    "event_kinds",
    "parse_event",
    "parse_event_or_none",
]

SCHEMA_VERSION = 1
"""The version of this schema; bumped only for a change that is not additive."""

UtteranceSource = Literal["llm", "preempt", "announce", "note"]
ToolOutcome = Literal["ok", "error", "refused", "vetoed"]
StepState = Literal["done", "open", "not_applicable", "blocked"]
CorrectionStatus = Literal["queued", "delivered", "expired", "suppressed"]


class EventBase(BaseModel):
    """Fields every event carries (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = Field(default=SCHEMA_VERSION, description="The schema's version.")
    session: str = Field(description="The conversation (session) id.")
    seq: int = Field(ge=0, description="Position in the session: 1, 2, 3 … with no gaps.")
    t: float = Field(ge=0, description="Seconds since the call started (this worker's start).")
    turn: int = Field(default=0, ge=0, description="The caller turn (0 before the first).")


class CallStarted(EventBase):
    """The call began: the agent, the channel and the wall-clock start (epoch seconds)."""

    kind: Literal["call_started"] = "call_started"
    agent: str
    started_at: float
    channel: str | None = None


class CallEnded(EventBase):
    """The call ended (the pipeline stopped, or the simulation finished)."""

    kind: Literal["call_ended"] = "call_ended"
    status: str = ""
    reason: str = ""


class CallerTranscript(EventBase):
    """A final transcript of the caller (redacted as records keep it)."""

    kind: Literal["caller_transcript"] = "caller_transcript"
    text: str
    source: Literal["cascade", "s2s", "text"] = "cascade"


class BotUtteranceEvent(EventBase):
    """What the bot actually said, measured (not what the engine meant it to say)."""

    kind: Literal["bot_utterance"] = "bot_utterance"
    text: str
    source: UtteranceSource = Field(
        description="llm: the model's words; preempt: the engine spoke verbatim; announce: an "
        "announcement slot; note: a monitor note that was voiced."
    )


class ToolCallEvent(EventBase):
    """A tool call made by the model (``by=llm``) or fired by the engine (``by=engine``)."""

    kind: Literal["tool_call"] = "tool_call"
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None
    by: Literal["llm", "engine"] = "llm"
    task: str | None = None


class ToolResultEvent(EventBase):
    """The outcome of a tool call; ``reason`` says why a call was refused, vetoed or failed."""

    kind: Literal["tool_result"] = "tool_result"
    name: str
    outcome: ToolOutcome = Field(
        description="ok; error (the tool failed or its arguments did not fit); refused (not "
        "available now); vetoed (the procedure gate blocked it)."
    )
    reason: str | None = Field(
        default=None, description="Why it was not ok, in the result's words."
    )
    result: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None
    by: Literal["llm", "engine"] = "llm"


class SlotChange(EventBase):
    """A slot's record changed (status ``pending`` awaits confirmation)."""

    kind: Literal["slot_change"] = "slot_change"
    slot: str
    status: str = Field(description="The slot's status (e.g. filled, pending, confirmed, empty).")
    value: Any = None
    source: str | None = None
    previous_status: str | None = None


class EngineDecision(EventBase):
    """The engine's action for one inference."""

    kind: Literal["engine_decision"] = "engine_decision"
    phase: str
    status: str = "in_progress"
    directive: str = ""
    visible_tools: list[str] = Field(default_factory=list)
    preempt: bool = False
    asks: list[str] = Field(default_factory=list)
    calls: list[str] = Field(default_factory=list)
    hints: list[dict[str, Any]] = Field(default_factory=list)


class ChecklistStep(BaseModel):
    """One procedure step's state."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    title: str = ""
    state: StepState
    current: bool = Field(default=False, description="The step the caller is on now.")


class ChecklistStatus(EventBase):
    """One checklist (procedure) with each step's state and its last violation."""

    kind: Literal["checklist"] = "checklist"
    procedure: str
    title: str = ""
    armed: bool = True
    current_step: str | None = None
    steps: list[ChecklistStep] = Field(default_factory=list)
    last_violation: dict[str, Any] | None = None


class GateDecision(EventBase):
    """The procedure gate's decision on an irreversible (gated) tool."""

    kind: Literal["gate"] = "gate"
    tool: str
    decision: Literal["allow", "veto"]
    reason: str | None = None
    open_steps: list[str] = Field(default_factory=list)
    log: str | None = None


class MonitorCheck(EventBase):
    """One logic_slm call of the monitor or the extractor."""

    kind: Literal["monitor_check"] = "monitor_check"
    request_id: str = Field(description="``<scope>-<n>``: unique within the call.")
    purpose: Literal["monitor", "extractor"] = "monitor"
    latency_ms: float | None = None
    verdict: str = Field(
        default="", description="The call's outcome: ok, timeout, transport_error …"
    )
    cost_usd: float | None = None
    model: str | None = None


class CorrectionEvent(EventBase):
    """A monitor correction's life: queued, delivered, expired or suppressed (and why)."""

    kind: Literal["correction"] = "correction"
    status: CorrectionStatus = Field(
        description="queued (a note waits for the next caller turn or tool result); delivered "
        "(with its channel); expired (left the queue undelivered, ``reason`` says why); "
        "suppressed (a finding not corrected, ``reason`` names the rule)."
    )
    step: str | None = None
    text: str = ""
    channel: str | None = None
    severity: str | None = None
    reason: str | None = None


class TransactionEvent(EventBase):
    """A multi-turn transaction's state (``None`` fields when no transaction is active)."""

    kind: Literal["transaction"] = "transaction"
    name: str | None = None
    status: str
    state: dict[str, Any] = Field(default_factory=dict)


class CheckpointEvent(EventBase):
    """A checkpoint save, or the conflict that stopped this worker."""

    kind: Literal["checkpoint"] = "checkpoint"
    action: Literal["saved", "conflict"]
    version: int | None = None
    expected_version: int | None = None
    current_version: int | None = None


class PayloadEvent(EventBase):
    """A rich response part delivered to the client (a card, a transfer, an end of call)."""

    kind: Literal["payload"] = "payload"
    part: dict[str, Any] = Field(default_factory=dict)


class DebugEvent(EventBase):
    """A structured engine log entry (its tag, the invocation counter ``n`` and its data)."""

    kind: Literal["debug"] = "debug"
    tag: str
    n: int = 0
    data: dict[str, Any] = Field(default_factory=dict)


class TurnEnded(EventBase):
    """A caller turn is over: the session's status then and whether the call ended."""

    kind: Literal["turn_ended"] = "turn_ended"
    status: str
    ended: bool = False


Event: TypeAlias = Annotated[
    CallStarted
    | CallEnded
    | CallerTranscript
    | BotUtteranceEvent
    | ToolCallEvent
    | ToolResultEvent
    | SlotChange
    | EngineDecision
    | ChecklistStatus
    | GateDecision
    | MonitorCheck
    | CorrectionEvent
    | TransactionEvent
    | CheckpointEvent
    | PayloadEvent
    | DebugEvent
    | TurnEnded,
    Field(discriminator="kind"),
]
"""Any conversation event (a tagged union on ``kind``)."""

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: dict[str, Any] | str | bytes) -> Event:
    """Parse one event from a mapping or its JSON text.

    Raises:
        pydantic.ValidationError: When the data is not an event of this schema.
    """
    if isinstance(data, (str, bytes)):
        return _ADAPTER.validate_json(data)
    return _ADAPTER.validate_python(data)


def parse_event_or_none(data: dict[str, Any] | str | bytes) -> Event | None:
    """Parse one event; None for a kind this reader does not know (a newer writer)."""
    try:
        return parse_event(data)
    except ValidationError:
        return None


def event_kinds() -> dict[str, type[EventBase]]:
    """Every event kind with its model, in schema order."""
    union = get_args(Event)[0]
    return {m.model_fields["kind"].default: m for m in get_args(union)}
