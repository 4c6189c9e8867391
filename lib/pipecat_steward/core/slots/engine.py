"""``step``: one engine invocation per LLM inference.

The turn pipeline runs in this order: gate, event pre-fill, state-change detection,
auto-promote and deferred routing, auto-deactivation, auto-confirm, declined
inputs, slot errors, steer-back, the stall escape, post-executor, then the announce cascade and
the DAG decision. The first stage that settles the turn returns its action; the rest are
skipped. Whatever settled it, the turn ends with the rule every engine shares: answer the
caller's question first (``core.slots.answer_first``). Everything is pure: the caller's state is copied, and time and randomness are not used
(the readback-transition prefix comes from the injected ``rng``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pipecat_steward.core.slots import exits, summary
from pipecat_steward.core.slots.action import Action, Chooser, EngineStep, ToolCall
from pipecat_steward.core.slots.affirm import is_affirmation
from pipecat_steward.core.slots.answer_first import answer_question_first
from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.slots.dag import (
    AllDone,
    Announce,
    Ask,
    AwaitReadback,
    Fire,
    is_active,
)
from pipecat_steward.core.slots.deflect import DEFLECTIONS_TO_DECLINE, is_deflection
from pipecat_steward.core.slots.merge import put
from pipecat_steward.core.slots.prefill import event_values
from pipecat_steward.core.slots.routing import fill_slots
from pipecat_steward.core.slots.turn import Draft, Turn
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.core.variables import JsonValue

__all__ = ["step"]


def step(
    flow: CompiledFlow,
    state: SessionState,
    user_text: str = "",
    *,
    rng: Chooser | None = None,
    event_data: Mapping[str, Any] | None = None,
    channel: str | None = None,
    first_turn: bool = False,
    caller_words: str | None = None,
) -> EngineStep:
    """Run the engine for one LLM invocation.

    Args:
        flow: The compiled flow.
        state: The session state before the invocation (not changed).
        user_text: The caller's final words when a turn starts; empty on re-invocations after
            tool results or preemptions.
        rng: Random source for the readback-transition prefix (first prefix when None).
        event_data: External values for event-sourced slots (e.g. telephony data).
        channel: Delivery channel for channel-specific responses.
        first_turn: No assistant reply exists yet; only forced preempts may skip the LLM.
        caller_words: The caller's words of the current turn, for the answer-first stage
            (``user_text`` when None; a re-invocation passes the words of its turn).

    Returns:
        The action to carry out and the new state.
    """
    if state.status != "in_progress":
        return EngineStep(_terminal(flow, state), state)
    turn = Turn(flow, state.copy(), user_text.strip(), rng, first_turn)
    if channel is not None:
        turn.state.channel = channel
    turn.begin()
    action = _settle(turn, event_data)
    words = user_text if caller_words is None else caller_words
    return EngineStep(answer_question_first(action, words), turn.state)


def _settle(turn: Turn, event_data: Mapping[str, Any] | None) -> Action:
    """The action of the first stage that settles the turn (the DAG decision when none does)."""
    for stage in _STAGES:
        action = stage(turn, event_data)
        if action is not None:
            return turn.finish(action)
    return turn.finish(_evaluate(turn))


def _terminal(flow: CompiledFlow, state: SessionState) -> Action:
    """Terminal: once complete or escalated, the engine changes nothing and hides its tools."""
    return Action(phase="terminal", status=state.status, hidden_tools=flow.tool_names)


def _gate(turn: Turn, _: object) -> Draft | None:
    """Ask the gate slot until it is settled; its errors and stalls reach escalation too."""
    gate = turn.flow.config.gate_slot
    if gate is None:
        return None
    record = turn.state.record(gate)
    if record.settled:
        return None
    if turn.state.slot_errors:  # retries count while the gate is open, up to their exhaust
        return exits.slot_errors(turn, None)
    steer = turn.flow.config.steer_back
    stalled = turn.user_text and turn.state.steer_back_turns >= steer.escalate_after
    if record.status == "declined" or stalled:
        turn.log("gate_exhaust", slot=gate, status=record.status)
        return exits.escalate(turn, steer.on_exhaust)
    if turn.user_text and not turn.state.gate_user_text:
        turn.state.gate_user_text = turn.user_text
    return turn.llm_action(None, turn.ask_directive((gate,)), phase="gate")


def _prefill(turn: Turn, event_data: Mapping[str, Any] | None) -> None:
    """Fill event-sourced slots once each; a slot the caller already touched is theirs."""
    if not event_data:
        return
    state = turn.state
    values = {
        name: value
        for name, value in event_values(turn.flow, event_data).items()
        if name not in state.prefilled and state.record(name).status == "empty"
    }
    if not values:
        return None
    result = fill_slots(turn.flow, state, values, skip_readback=True, origin="event")
    turn.state = result.state
    turn.state.prefilled = [*turn.state.prefilled, *result.filled]
    for name in result.filled:
        turn.log("fill_slots", slot=name, value=turn.state.record(name).value)
    return None


def _detect_change(turn: Turn, _: object) -> None:
    state = turn.state
    if state.revision == state.seen_revision:
        return None
    # Any change of state is progress: a setter, a confirmation (by code or by the LLM), a
    # decline, a correction or a task result.
    state.steer_back_turns = 0
    state.auto_confirm_pending = False
    turn.log("progress", revision=state.revision)
    return None


def _promote_and_route(turn: Turn, _: object) -> None:
    flow, state = turn.flow, turn.state
    promoted = state.promoted
    held = state.summary_slots  # a confirm_before summary holds its inputs pending
    pending = [
        (n, r)
        for n, r in state.slots.items()
        if r.status == "pending" and n not in promoted and n not in held
    ]
    for name, record in pending:
        if not flow.slot[name].config.requires_readback:
            put(
                state,
                name,
                SlotRecord("filled", record.value, record.source, record.origin, record.turn),
            )
        elif name in flow.deferred_eligible:
            put(
                state,
                name,
                SlotRecord("deferred", record.value, record.source, record.origin, record.turn),
            )
            turn.fresh_deferred.append(name)
    turn.promoted_now = exits.promote_complete_groups(flow, state)
    return None


def _deactivate(turn: Turn, _: object) -> None:
    for slot in turn.flow.conditional:
        record = turn.state.record(slot.name)
        if record.status in ("filled", "pending", "deferred", "inferred") and not is_active(
            slot, turn.state
        ):
            put(turn.state, slot.name, SlotRecord("empty", None, None, "program", turn.state.turn))
            turn.log("slot_deactivated", slot=slot.name, source=record.status)
    return None


def _auto_confirm(turn: Turn, _: object) -> Draft | None:
    """Code confirms a heard readback only when the reply carries nothing of its own.

    Any other reply — "yes, for 6", "yes, and my wife has an allergy", a question — goes to
    the LLM with the readback still in force: it confirms, rejects or corrects with tools.
    """
    state = turn.state
    if not (turn.user_text and state.had_pending):
        return None
    pending = [r.value for r in state.slots.values() if r.status == "pending"]
    choices = [v for s in turn.flow.slots for v in s.config.values]
    if not pending or not is_affirmation(turn.user_text, pending, choices):
        return None
    state.auto_confirm_pending = True
    turn.log("auto_confirm", user_msg=turn.user_text)
    call = ToolCall("confirm_pending", {}, "confirm")
    return Draft("readback", preempt=True, force_preempt=True, calls=(call,))


def _deflected(turn: Turn, _: object) -> None:
    """A caller who evades the same question twice has declined it."""
    state = turn.state
    if not (turn.user_text and state.last_asks and is_deflection(turn.user_text)):
        return None
    for name in state.last_asks:
        slot = turn.flow.slot.get(name)
        if slot is None or not slot.is_user or state.record(name).status != "empty":
            continue
        count = state.deflections.get(name, 0) + 1
        state.deflections = {**state.deflections, name: count}
        turn.log("deflection", slot=name, count=count)
        if count >= DEFLECTIONS_TO_DECLINE:
            put(state, name, SlotRecord("declined", None, turn.user_text, "user", state.turn))
            turn.log("declined_by_deflection", slot=name)
    return None


def _evaluate(turn: Turn) -> Draft:
    decision = turn.announce_cascade()
    if isinstance(decision, Ask) and exits.check_completion(turn):
        decision = AllDone()
    if isinstance(decision, Fire):
        decision = summary.fire_or_confirm(turn, decision)
    match decision:
        case Fire():
            return _fire(turn, decision)
        case AwaitReadback():
            return _readback(turn, decision)
        case Ask():
            return _ask(turn, decision)
        case AllDone():
            return _all_done(turn, decision)
        case Announce():  # pragma: no cover - the cascade consumes every announce
            raise AssertionError("announce left after cascade")


def _fire(turn: Turn, decision: Fire) -> Draft:
    exits.re_defer(turn, decision.tasks)
    calls = tuple(_executor_call(turn, name) for name in decision.tasks)
    turn.log("fire", tasks=list(decision.tasks))
    message = turn.joined_messages()
    return turn.preempt_action(
        decision, message, calls=calls, force=turn.announce_force, phase="collection"
    )


def _executor_call(turn: Turn, task_name: str) -> ToolCall:
    task = turn.flow.task[task_name]
    args: dict[str, JsonValue] = {}
    for name in task.config.inputs:
        slot = turn.flow.slot[name]
        if is_active(slot, turn.state):
            record = turn.state.record(name)
            args[name] = record.value if record.settled else slot.config.default
    return ToolCall(task.config.tool, args, "executor", task_name)


def _readback(turn: Turn, decision: AwaitReadback) -> Draft:
    text = summary.summary_text(turn, decision.slots) or turn.readback(decision.slots)
    if turn.promoted_now or any(n in turn.state.promoted for n in decision.slots):
        turn.hints.append(turn.scope_hint(decision.slots))
    turn.asks = decision.slots
    prefix = turn.joined_messages()
    if prefix and turn.task_message:
        return turn.preempt_action(decision, f"{prefix} {text}", phase="readback")
    return turn.llm_action(decision, f"{prefix} {text}".strip(), phase="readback")


def _ask(turn: Turn, decision: Ask) -> Draft:
    question = turn.ask_directive(decision.slots)
    turn.asks = decision.slots
    turn.ask_response(decision.slots)
    if turn.readback_transition:
        # Announce messages that became due with the confirmation are said, not dropped.
        parts = [turn.transition_prefix(), *turn.announce_messages, question]
        message = " ".join(p for p in parts if p)
        force = turn.announce_force
        return turn.preempt_action(decision, message, force=force, phase="collection")
    if turn.task_message:
        # A then_say that asks a question asks the unblocked slot itself; a status-only
        # then_say ("Good news, we have openings.") is followed by the question.
        if _asks_something(turn.task_message):
            return turn.preempt_action(decision, turn.joined_messages(), phase="collection")
        message = f"{turn.joined_messages()} {question}"
        return turn.preempt_action(decision, message, phase="collection")
    if turn.announce_messages:
        message = f"{turn.joined_messages()} {question}".strip()
        if turn.announce_force:
            return turn.preempt_action(decision, message, force=True, phase="collection")
        return turn.llm_action(decision, message)
    return turn.llm_action(decision, question)


def _asks_something(text: str) -> bool:
    return "?" in text


def _all_done(turn: Turn, decision: AllDone) -> Draft:
    if turn.state.status == "in_progress":
        exits.check_completion(turn)
    message = turn.joined_messages()
    if message and (turn.task_message or turn.announce_force):
        return turn.preempt_action(decision, message, force=turn.announce_force, phase="collection")
    return turn.llm_action(decision, message)


_STAGES: tuple[Callable[[Turn, Mapping[str, Any] | None], Draft | None], ...] = (
    _prefill,
    _detect_change,
    _deflected,
    _promote_and_route,
    summary.settle,
    _gate,
    _deactivate,
    _auto_confirm,
    exits.declined_inputs,
    exits.slot_errors,
    exits.stall_escape,
    exits.steer_back,
    exits.post_executor,
)
