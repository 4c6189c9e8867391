"""Turn stages that end a turn early: declined inputs, slot errors, steer-back, the stall escape and post-executor handling; plus deferred-group promotion and completion.

Each stage takes the ``Turn`` and returns a ``Draft`` action when it settles the turn, else None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipecat_steward.core.slots import prompt, summary
from pipecat_steward.core.slots.action import Hint, ToolCall
from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.slots.config import OnExhaust, ThenCall
from pipecat_steward.core.slots.dag import (
    AwaitReadback,
    decide,
    has_status,
    is_active,
    is_complete,
    task_active,
)
from pipecat_steward.core.slots.merge import put
from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.slots.turn import Draft, Turn
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.core.variables import JsonValue

__all__ = [
    "check_completion",
    "declined_inputs",
    "escalate",
    "post_executor",
    "promote_complete_groups",
    "re_defer",
    "slot_errors",
    "stall_escape",
    "steer_back",
    "then_call",
]


def then_call(then: str | ThenCall | None, values: Mapping[str, JsonValue]) -> tuple[ToolCall, ...]:
    """Resolve an ``on_exhaust.then`` (string or dict form) with ``{slot}`` args."""
    if then is None:
        return ()
    if isinstance(then, str):
        return (ToolCall(then, {}, "then"),)
    args = {k: render(v, values) if isinstance(v, str) else v for k, v in then.args.items()}
    return (ToolCall(then.tool, args, "then"),)


def _escalate(turn: Turn, exhaust: OnExhaust, extra: Mapping[str, str] | None = None) -> Draft:
    state = turn.state
    values: dict[str, JsonValue] = {**state.variables, **(extra or {})}
    message = render(exhaust.say, values)
    turn.response.extend(
        prompt.resolve_response(state, exhaust.response, exhaust.channel_responses)
    )
    calls = then_call(exhaust.then, values)
    state.status = "escalated"
    return turn.preempt_action(None, message, calls=calls, force=True)


def escalate(turn: Turn, exhaust: OnExhaust) -> Draft:
    """End the conversation through ``exhaust``: say its message, make its call, escalate."""
    return _escalate(turn, exhaust)


def declined_inputs(turn: Turn, _: object) -> Draft | None:
    """A declined required input of a pending task triggers its ``on_input_declined``."""
    flow, state = turn.flow, turn.state
    if not has_status(state, "declined"):
        return None
    for task in flow.tasks:
        if task.name in state.succeeded or not task_active(task, state):
            continue
        for slot in flow.task_inputs[task.name]:
            name = slot.name
            if (
                state.record(name).status == "declined"
                and slot.config.required
                and is_active(slot, state)
            ):
                turn.log("input_declined", task=task.name, slot=name)
                rule = task.config.on_input_declined
                extra = {
                    "declined": slot.label.replace("_", " "),
                    "summary": prompt.summary(flow, state),
                }
                return _escalate(turn, OnExhaust(say=rule.say, then=rule.then), extra)
    return None


def slot_errors(turn: Turn, _: object) -> Draft | None:
    """Process every setter error of the turn; join their messages."""
    state = turn.state
    if not state.slot_errors:
        return None
    errors, state.slot_errors = state.slot_errors, []
    messages: list[str] = []
    for error in errors:
        slot = turn.flow.slot[error.slot]
        key = f"slot:{error.slot}"
        state.retries[key] = state.retries.get(key, 0) + 1
        turn.log("slot_error", slot=error.slot, code=error.code, retries=state.retries[key])
        validation = slot.config.validation
        if state.retries[key] >= validation.max_retries:
            turn.log("slot_error_exhaust", slot=error.slot)
            return _escalate(turn, validation.on_exhaust)
        text = validation.errors.get(error.code) or prompt.ask_text(turn.flow, state, [error.slot])
        messages.append(render(text, state.variables))
        by_channel = validation.channel_error_responses.get(error.code, {})
        turn.response.extend(
            prompt.resolve_response(state, validation.error_responses.get(error.code), by_channel)
        )
    return turn.preempt_action(None, " ".join(dict.fromkeys(messages)))


def steer_back(turn: Turn, _: object) -> Draft | None:
    """The 3-tier stall recovery: soft directive, hard preempt with yield, escalate."""
    state = turn.state
    cfg = turn.flow.config.steer_back
    if not turn.user_text:
        return None
    if turn.yielded:
        turn.log("steer_back_yield", turns=state.steer_back_turns)
        return None
    turns = state.steer_back_turns
    if turns >= cfg.escalate_after:
        turn.log("steer_back_escalate", turns=turns)
        return _escalate(turn, cfg.on_exhaust)
    if turns < cfg.soft_after:
        return None
    question = _current_question(turn)
    if turns >= cfg.hard_after and question:
        # The caller's words of this turn may hold the answer: the LLM runs with a firm
        # directive and can call the setter; nothing the caller said is thrown away.
        state.hard_steer_yielded = True
        turn.log("steer_back_hard", turns=turns, msg=question)
        turn.hints.append(Hint("steer_back", render(_HARD_DIRECTIVE, {"question": question})))
        return None
    if turns >= cfg.soft_after and question:
        directive = render(cfg.directive, {"question": question})
        turn.log("steer_back_soft", turns=turns, directive=directive)
        turn.hints.append(Hint("steer_back", directive))
    return None


_HARD_DIRECTIVE = (
    "The conversation has drifted for several turns. If the caller's last words answer the "
    "open question, call its setter. Otherwise answer them in one short sentence at most and "
    "then ask exactly: {question}"
)


def _current_question(turn: Turn) -> str:
    decision = decide(turn.flow, turn.state)
    if isinstance(decision, AwaitReadback):
        return summary.summary_text(turn, decision.slots) or turn.readback(decision.slots)
    names = getattr(decision, "slots", ())
    return turn.ask_directive(names) if names and not getattr(decision, "tasks", ()) else ""


def stall_escape(turn: Turn, _: object) -> Draft | None:
    """Stall escape: after N turns with no slot newly settled, hand over with what we have."""
    state = turn.state
    limit = turn.flow.config.stall_escape_after
    if limit is None or not turn.user_text:
        return None
    settled = len(
        [r for r in state.slots.values() if r.status in ("filled", "inferred", "declined")]
    )
    state.stall_turns = 0 if settled > state.settled_count else state.stall_turns + (state.turn > 1)
    state.settled_count = settled
    if state.stall_turns < limit:
        return None
    turn.log("stall_escape", turns=state.stall_turns)
    say = turn.flow.config.stall_escape_say
    return _escalate(turn, OnExhaust(say=say), {"summary": prompt.summary(turn.flow, state)})


def post_executor(turn: Turn, _: object) -> Draft | None:
    """Apply task results: success → then_say, terminal → complete; failure → retry or exhaust."""
    state = turn.state
    done = state.just_completed
    if not done:  # no task results since the last invocation
        turn.task_message = ""
        return turn.preempt_action(None, "", force=True) if state.status == "complete" else None
    state.just_completed = []
    messages: list[str] = []
    for name in done:
        action = _one_result(turn, name, messages)
        if action is not None:
            return action
    turn.task_message = " ".join([m for m in messages if m])
    if state.status == "complete":
        return turn.preempt_action(None, turn.task_message, force=True)
    failed = any(n not in state.succeeded for n in done)
    return turn.preempt_action(None, turn.task_message) if failed else None


def _one_result(turn: Turn, name: str, messages: list[str]) -> Draft | None:
    state, cfg = turn.state, turn.flow.task[name].config
    ok = name in state.succeeded
    turn.log("task", name=name, ok=ok)
    if ok:
        state.retries.pop(name, None)
        messages.append(render(cfg.then_say, state.variables))
        turn.response.extend(
            prompt.resolve_response(state, cfg.then_response, cfg.channel_then_response)
        )
        if cfg.terminal:
            state.status = "complete"
        return None
    state.retries[name] = state.retries.get(name, 0) + 1
    if state.retries[name] >= cfg.on_failure.max_retries:
        turn.log("task_exhaust", name=name)
        return _escalate(turn, cfg.on_failure.on_exhaust)
    for slot in cfg.on_failure.clear_slots:
        if state.record(slot).status != "declined":  # a decline is terminal
            put(state, slot, SlotRecord("empty", None, None, "program", state.turn))
    messages.append(render(cfg.on_failure.retry_say, state.variables))
    turn.response.extend(
        prompt.resolve_response(
            state, cfg.on_failure.retry_response, cfg.on_failure.channel_retry_response
        )
    )
    return None


def promote_complete_groups(flow: CompiledFlow, state: SessionState) -> list[str]:
    """Promote a grouped task's deferred inputs to pending once all are accounted for."""
    promoted: list[str] = []
    for task in flow.grouped_tasks:
        if task.name in state.succeeded:
            continue
        inputs = [flow.slot[n] for n in task.config.inputs]
        group = [s.name for s in inputs if s.is_user and is_active(s, state)]
        statuses = [state.record(n).status for n in group]
        if "deferred" not in statuses or not all(_accounted(flow, state, n) for n in group):
            continue
        for name in group:
            r = state.record(name)
            if r.status == "deferred":
                put(state, name, SlotRecord("pending", r.value, r.source, r.origin, r.turn))
                promoted.append(name)
    state.promoted = [*state.promoted, *promoted]
    return promoted


def _accounted(flow: CompiledFlow, state: SessionState, name: str) -> bool:
    status = state.record(name).status
    if status in ("filled", "inferred", "pending", "deferred"):
        return True
    return not flow.slot[name].config.required and status == "declined"


def re_defer(turn: Turn, firing: Sequence[str]) -> None:
    """Promoted values go back to deferred when a different task is about to fire."""
    state = turn.state
    groups = {
        n
        for t in firing
        if turn.flow.task[t].config.readback_inputs
        for n in turn.flow.task[t].config.inputs
    }
    for name in list(state.promoted):
        r = state.record(name)
        if r.status == "pending" and name not in groups:
            put(state, name, SlotRecord("deferred", r.value, r.source, r.origin, r.turn))
            state.promoted.remove(name)
            turn.log("re_deferred", slot=name, task=",".join(firing))


def check_completion(turn: Turn) -> bool:
    """Complete a flow without a terminal task once every required slot is settled; True if so."""
    flow, state = turn.flow, turn.state
    if flow.has_terminal or state.status != "in_progress":
        return False
    for task in flow.tasks:
        if task.name not in state.succeeded and task_active(task, state):
            return False
    if not is_complete(flow, state):
        return False
    state.status = "complete"
    turn.log("done", reason="all required slots settled")
    return True
