"""The turn logic of transactions: the desk's state in, what happens next out.

A caller turn, the model's tool calls of a turn, or a call's result come in with the ``Desk``
(the transaction latch plus what the conversation keeps around it: an offer the caller may
take with a "yes", an outcome to announce, words to say before the next message). Out comes
the new ``Desk`` and one ``Next``: code speaks (``Speak``), a tool runs (``RunTool``), or the
model runs with a directive (``PromptModel``). ``to_action`` turns that into the ``Action``
every host carries out, ending with the rule both engines share: answer the caller's
question first.

Precedence, in order: an outcome to announce; a finished transaction not yet reported; a
pre-validation to run; an executor to run; the confirmation question; else the model asks for
what is missing. When a detour finishes, the transaction it set aside comes back: at once when
it was confirming (asked again, after a fresh check), otherwise offered ("shall we go back…?").

Time (``at``), the identity scope of idempotency keys and the turn counter are parameters;
nothing here reads a clock, does IO or draws random numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, assert_never

from pipecat_steward.core.slots.action import Action, DebugEntry, ToolCall
from pipecat_steward.core.slots.affirm import is_affirmation, is_affirmative
from pipecat_steward.core.slots.answer_first import answer_question_first
from pipecat_steward.core.slots.prompt import SENTINEL
from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.transactions.execution import (
    ConfirmedByCode,
    apply_confirmation,
    confirmation_gate,
    confirmation_text,
    mark_reported,
    pending_execution,
    pre_validation_call,
    record_pre_validation,
    record_pre_validation_failure,
    record_result,
    route_confirmation,
    unreported_outcome,
)
from pipecat_steward.core.transactions.intents import CONFIRM_TOOL
from pipecat_steward.core.transactions.lifecycle import (
    apply,
    reset_inconsistent,
    resumable,
    resume,
    start,
    visible_tools,
)
from pipecat_steward.core.transactions.model import (
    TransactionState,
    TransactionStatus,
    diagnose,
)
from pipecat_steward.core.transactions.offers import Offer
from pipecat_steward.core.transactions.routing import ToolUse, TurnInputs, route_turn
from pipecat_steward.core.transactions.speech import Intents, directive_text, outcome_text
from pipecat_steward.core.variables import JsonValue

__all__ = [
    "EXECUTOR_TASK",
    "PRE_VALIDATION_TASK",
    "Desk",
    "DeskContext",
    "Next",
    "PromptModel",
    "RunTool",
    "Speak",
    "Turned",
    "caller_turn",
    "collect",
    "continue_turn",
    "prompt_model",
    "ran",
    "refusal",
    "route_calls",
    "to_action",
]

S = TransactionStatus
PRE_VALIDATION_TASK = "__pre_validation__"
"""``ToolCall.task`` of a pre-validation call."""
EXECUTOR_TASK = "__transaction__"
"""``ToolCall.task`` of a transaction's executor call."""
_PROTOCOL = (
    "<transaction_protocol>\nCall the tools to record what the caller says; code decides what "
    "happens next.\n</transaction_protocol>"
)


@dataclass(frozen=True, slots=True)
class Desk:
    """Everything the transaction turn logic keeps between invocations.

    Attributes:
        state: The transaction latch.
        offer: What a "yes" next turn takes up (one question at a time).
        announce: An outcome to say before anything else (a failed or negative check).
        lead: Words said before the next message of this cascade ("Done. Now, back to…").
        calls: The model's transaction calls of this turn, routed together.
        words: The caller's words of this turn (routing and the answer-first stage read them).
        log: Debug entries waiting for the next action.
    """

    state: TransactionState = field(default_factory=TransactionState)
    offer: Offer | None = None
    announce: str = ""
    lead: str = ""
    calls: tuple[ToolUse, ...] = ()
    words: str = ""
    log: tuple[DebugEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class DeskContext:
    """What an invocation is given besides the desk.

    Attributes:
        intents: The agent's intents (catalog and texts).
        scope: The call's identity, part of every idempotency key.
        at: The time of this invocation (ISO text), for the latch's timestamps.
        n: The caller-turn counter, for debug entries.
    """

    intents: Intents
    scope: str
    at: str
    n: int


@dataclass(frozen=True, slots=True)
class Speak:
    """Code says ``text`` (a confirmation question or an outcome); the model does not run."""

    text: str
    phase: Literal["readback", "terminal"]


@dataclass(frozen=True, slots=True)
class RunTool:
    """Run ``call`` (a pre-validation or the executor), after saying ``lead`` (may be empty)."""

    call: ToolCall
    lead: str = ""


@dataclass(frozen=True, slots=True)
class PromptModel:
    """The model runs, told what to get from the caller."""

    directive: str


Next = Speak | RunTool | PromptModel
"""What happens next in the conversation."""


@dataclass(frozen=True, slots=True)
class Turned:
    """The outcome of one invocation: the new desk and what happens next."""

    desk: Desk
    next: Next


# --- entry points -----------------------------------------------------------------------------


def caller_turn(ctx: DeskContext, desk: Desk, text: str) -> Turned:
    """A caller turn starts: repair the latch, take an offer, or confirm a plain yes by code."""
    offer = desk.offer  # a "yes" now takes it; anything else lets it go
    desk = _repaired(ctx, replace(desk, calls=(), words=text, offer=None))
    txn = desk.state.active_transaction
    if offer is not None and txn is None and is_affirmative(text):
        return continue_turn(ctx, _take(ctx, desk, offer))
    if txn is not None and txn.status == S.AWAITING_CONFIRMATION:
        gate = confirmation_gate(desk.state, text)
        if not isinstance(gate, ConfirmedByCode):
            return Turned(desk, prompt_model(ctx, desk))  # only confirm/reject/correct visible
        desk = _log(ctx, desk, "transaction_confirmed", by="code")
        state = apply_confirmation(
            ctx.intents.catalog, desk.state, gate, scope=ctx.scope, at=ctx.at
        )
        desk = replace(desk, state=state)
    return continue_turn(ctx, desk)


def route_calls(ctx: DeskContext, desk: Desk) -> Turned:
    """Route the model's transaction calls of this turn together."""
    calls, desk = desk.calls, replace(desk, calls=())
    catalog, was = ctx.intents.catalog, desk.state.active_transaction
    if was is not None and was.status == S.AWAITING_CONFIRMATION:
        decision = route_confirmation(catalog, desk.state, list(calls))
        state = apply_confirmation(catalog, desk.state, decision, scope=ctx.scope, at=ctx.at)
    else:
        decision = route_turn(catalog, desk.state, TurnInputs(calls, {}, desk.words))
        state = apply(catalog, desk.state, decision, at=ctx.at)
    desk = _log(
        ctx, replace(desk, state=state), "transaction_route", decision=type(decision).__name__
    )
    if was is not None and desk.state.active_transaction is None:
        return _after_outcome(ctx, desk, "")  # a detour cancelled: bring the set-aside one back
    return continue_turn(ctx, desk)


def continue_turn(ctx: DeskContext, desk: Desk) -> Turned:
    """What the current transaction status asks for (see the module's precedence)."""
    catalog, state = ctx.intents.catalog, desk.state
    if desk.announce:
        return _after_outcome(ctx, replace(desk, announce=""), desk.announce)
    if (told := unreported_outcome(state)) is not None:
        desk = replace(desk, state=mark_reported(state))
        return _after_outcome(ctx, desk, outcome_text(ctx.intents, told))
    if (pre := pre_validation_call(catalog, state)) is not None:
        return _run(desk, ToolCall(pre.tool, dict(pre.arguments), "executor", PRE_VALIDATION_TASK))
    if (run := pending_execution(catalog, state)) is not None:
        args = {**run.arguments, "idempotency_key": run.idempotency_key}
        return _run(desk, ToolCall(run.tool, args, "executor", EXECUTOR_TASK))
    txn = state.active_transaction
    if txn is not None and txn.status == S.AWAITING_CONFIRMATION:
        return _say(desk, confirmation_text(catalog, state), "readback")
    return Turned(desk, prompt_model(ctx, desk))


def prompt_model(ctx: DeskContext, desk: Desk) -> PromptModel:
    """The model runs, asking for what the transaction needs next."""
    return PromptModel(directive_text(ctx.intents, desk.state))


def ran(ctx: DeskContext, desk: Desk, call: ToolCall, result: Mapping[str, Any], ok: bool) -> Desk:
    """Record the result of a pre-validation or executor call ``continue_turn`` asked for."""
    if call.task == EXECUTOR_TASK:
        key = str(call.args.get("idempotency_key"))
        state = record_result(desk.state, key=key, ok=ok, result=dict(result), at=ctx.at)
        return replace(desk, state=state)
    return _pre_validated(ctx, desk, result, ok)


def refusal(ctx: DeskContext, desk: Desk, name: str, heard: str) -> dict[str, Any] | None:
    """Why the model's call of ``name`` is refused now, as its tool result (None: taken).

    A tool not offered now is refused; so is a confirmation without the caller's plain yes:
    a transaction acts on the caller's yes, never on the model's reading of other words
    ("no", "next week" or "yes, and PED-1003" leave it waiting for a plain answer).
    """
    directive = directive_text(ctx.intents, desk.state)
    if name not in visible_tools(ctx.intents.catalog, desk.state):
        return {"error": True, "error_code": "not_available", "directive": directive}
    txn = desk.state.active_transaction
    pending = list(txn.arguments.values()) if txn is not None else []
    if name == CONFIRM_TOOL and not is_affirmation(heard, pending):
        why = "The caller has not said a plain yes, so nothing is confirmed. "
        return {"error": True, "error_code": "not_confirmed", "directive": why + directive}
    return None


def collect(desk: Desk, name: str, args: Mapping[str, JsonValue]) -> Desk:
    """Keep a taken call for ``route_calls`` (after the setter's validator, for setters)."""
    return replace(desk, calls=(*desk.calls, ToolUse(name, dict(args))))


def to_action(ctx: DeskContext, desk: Desk, next_: Next) -> tuple[Desk, Action]:
    """The action that carries out ``next_``; the desk's debug entries ride on it."""
    events, desk = desk.log, replace(desk, log=())
    visible = frozenset(visible_tools(ctx.intents.catalog, desk.state))
    match next_:
        case Speak(text=text, phase=phase):
            action = Action(
                phase=phase,
                status="in_progress",
                visible_tools=visible,
                directive=text,
                preempt=True,
                force_preempt=True,
                message=text,
                events=events,
            )
        case RunTool(call=call, lead=lead):
            action = Action(
                phase="collection",
                status="in_progress",
                preempt=True,
                force_preempt=True,
                message=lead,
                calls=(call,),
                events=events,
            )
        case PromptModel(directive=directive):
            suffix = (
                f"{SENTINEL}\n{_PROTOCOL}\n<system_directive>\n{directive}\n</system_directive>"
            )
            action = Action(
                phase="collection",
                status="in_progress",
                visible_tools=visible,
                directive=directive,
                suffix=suffix,
                events=events,
            )
        case _:  # pragma: no cover - the union is closed
            assert_never(next_)
    return desk, answer_question_first(action, desk.words)


# --- steps ------------------------------------------------------------------------------------


def _repaired(ctx: DeskContext, desk: Desk) -> Desk:
    """An inconsistent latch (a corrupted or foreign checkpoint) is reported and reset."""
    problem = diagnose(desk.state)
    if problem is None:
        return desk
    desk = _log(ctx, desk, "transaction_diagnosis", code=str(problem.code), message=problem.message)
    return replace(desk, state=reset_inconsistent(desk.state, at=ctx.at))


def _take(ctx: DeskContext, desk: Desk, offer: Offer) -> Desk:
    """The caller said yes to an offer: resume the set-aside transaction, or retry."""
    catalog, state, intent = ctx.intents.catalog, desk.state, offer.intent
    if offer.kind == "retry":
        state = start(catalog, state, intent, dict(offer.arguments), at=ctx.at)
    elif any(t.intent == intent for t in state.interrupted):
        state = resume(catalog, state, intent, at=ctx.at)
    return _log(
        ctx, replace(desk, state=state), "transaction_offer_taken", kind=offer.kind, intent=intent
    )


def _after_outcome(ctx: DeskContext, desk: Desk, text: str) -> Turned:
    """Say an outcome; when a detour just ended, bring the set-aside transaction back.

    One set aside while confirming is resumed at once (its confirmation is asked again, after
    a fresh pre-validation where the intent has one); one set aside while collecting is
    offered, and a "yes" resumes it.
    """
    back = resumable(desk.state)
    if back is None or desk.state.active_transaction is not None:
        return _say(desk, text, "terminal") if text else continue_turn(ctx, desk)
    if back.status in (S.AWAITING_CONFIRMATION, S.PRE_VALIDATION):
        state = resume(ctx.intents.catalog, desk.state, back.intent, at=ctx.at)
        lead = f"{text} Now, back to your earlier request.".strip()
        desk = _log(
            ctx, replace(desk, state=state, lead=lead), "transaction_resumed", intent=back.intent
        )
        return continue_turn(ctx, desk)
    if desk.offer is None:  # a retry offer already ends the text; one question at a time
        texts = ctx.intents.texts[back.intent]
        values = {"intent": texts.spoken_name, **back.arguments}
        text = f"{text} {render(texts.resume_say, values)}".strip()
        desk = replace(desk, offer=Offer("resume", back.intent))
    return _say(desk, text, "terminal")


def _pre_validated(ctx: DeskContext, desk: Desk, result: Mapping[str, Any], ok: bool) -> Desk:
    """Record the check: eligible, out of scope, or FAILED when the check itself failed."""
    txn = desk.state.active_transaction
    if txn is None:
        return desk
    texts, state = ctx.intents.texts[txn.intent], desk.state
    if not ok:  # a backend error says nothing about eligibility: never "out of scope"
        state = record_pre_validation_failure(state, result=dict(result), at=ctx.at)
        announce = render(texts.check_failed_say, {**txn.arguments})
        offer = Offer("retry", txn.intent, dict(txn.arguments))
        desk = replace(desk, state=state, announce=announce, offer=offer)
        return _log(ctx, desk, "transaction_check_failed", intent=txn.intent)
    eligible = bool(result.get("eligible", True))
    state = record_pre_validation(state, eligible=eligible, result=dict(result), at=ctx.at)
    if eligible:
        return replace(desk, state=state)
    return replace(
        desk, state=state, announce=render(texts.out_of_scope_say, {**txn.arguments, **result})
    )


def _say(desk: Desk, text: str, phase: Literal["readback", "terminal"]) -> Turned:
    if desk.lead:
        text = f"{desk.lead} {text}"
    return Turned(replace(desk, lead=""), Speak(text, phase))


def _run(desk: Desk, call: ToolCall) -> Turned:
    """Run ``call``; what leads is spoken once the call ran, before what follows."""
    return Turned(replace(desk, lead=""), RunTool(call, desk.lead))


def _log(ctx: DeskContext, desk: Desk, tag: str, **data: object) -> Desk:
    return replace(desk, log=(*desk.log, DebugEntry(tag, ctx.n, data)))
