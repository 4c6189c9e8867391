"""The transaction turn logic is pure: the same desk and inputs give the same desk and action,
and no input is changed. Plus one conversation walked through, and the offer's checkpoint form."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.storage_support.intents import AT, CANCEL, SCOPE, catalog

from pipecat_steward.core.slots import Action
from pipecat_steward.core.transactions import (
    EXECUTOR_TASK,
    PRE_VALIDATION_TASK,
    Desk,
    DeskContext,
    Intents,
    IntentTexts,
    Offer,
    PromptModel,
    RunTool,
    Speak,
    Turned,
    caller_turn,
    collect,
    continue_turn,
    offer_from_json,
    offer_to_json,
    ran,
    refusal,
    route_calls,
    to_action,
)

CAT = catalog()
INTENTS = Intents(CAT, {name: IntentTexts(name) for name in CAT.intents})


def ctx(n: int = 1) -> DeskContext:
    return DeskContext(INTENTS, SCOPE, AT, n)


def test_a_cancellation_walks_check_confirm_execute_report() -> None:
    desk = collect(Desk(), f"start_{CANCEL}", {"order_id": "PED-1001"})
    turned = route_calls(ctx(), desk)
    assert isinstance(turned.next, RunTool) and turned.next.call.task == PRE_VALIDATION_TASK
    desk = ran(ctx(), turned.desk, turned.next.call, {"success": True, "eligible": True}, True)
    turned = continue_turn(ctx(), desk)
    assert turned.next == Speak("Cancel order PED-1001?", "readback")
    turned = caller_turn(ctx(2), turned.desk, "yes")
    assert isinstance(turned.next, RunTool) and turned.next.call.task == EXECUTOR_TASK
    assert "idempotency_key" in turned.next.call.args
    desk = ran(ctx(2), turned.desk, turned.next.call, {"success": True}, True)
    turned = continue_turn(ctx(2), desk)
    assert turned.next == Speak("Done.", "terminal")
    desk, action = to_action(ctx(2), turned.desk, turned.next)
    assert action.preempt and action.force_preempt and action.message == "Done."


def test_a_failed_check_offers_a_retry_that_a_yes_takes() -> None:
    desk = collect(Desk(), f"start_{CANCEL}", {"order_id": "PED-1001"})
    turned = route_calls(ctx(), desk)
    assert isinstance(turned.next, RunTool)
    desk = ran(ctx(), turned.desk, turned.next.call, {"error": True}, False)
    assert desk.offer == Offer("retry", CANCEL, {"order_id": "PED-1001"})
    turned = continue_turn(ctx(), desk)
    assert isinstance(turned.next, Speak) and "try again" in turned.next.text
    turned = caller_turn(ctx(2), turned.desk, "yes please")
    assert isinstance(turned.next, RunTool) and turned.next.call.task == PRE_VALIDATION_TASK


def test_a_confirmation_the_caller_did_not_say_is_refused() -> None:
    desk = Desk(state=_confirming())
    assert refusal(ctx(), desk, "confirm_transaction", "yes") is None
    refused = refusal(ctx(), desk, "confirm_transaction", "yes, and PED-1003")
    assert refused is not None and refused["error_code"] == "not_confirmed"
    hidden = refusal(ctx(), desk, f"start_{CANCEL}", "cancel it")
    assert hidden is not None and hidden["error_code"] == "not_available"


def _confirming() -> Any:
    desk = collect(Desk(), f"start_{CANCEL}", {"order_id": "PED-1001"})
    turned = route_calls(ctx(), desk)
    assert isinstance(turned.next, RunTool)
    return ran(ctx(), turned.desk, turned.next.call, {"eligible": True}, True).state


def test_offers_survive_their_checkpoint_form() -> None:
    for offer in (None, Offer("resume", CANCEL), Offer("retry", CANCEL, {"order_id": "PED-1"})):
        assert offer_from_json(offer_to_json(offer)) == offer
    assert offer_to_json(Offer("resume", CANCEL)) == {"kind": "resume", "intent": CANCEL}
    retry = offer_to_json(Offer("retry", CANCEL, {"order_id": "PED-1"}))
    assert retry == {"kind": "retry", "intent": CANCEL, "arguments": {"order_id": "PED-1"}}
    assert offer_from_json({"kind": "unknown", "intent": CANCEL}) is None


# --- purity: the same inputs give the same outputs, and nothing given is changed ----------------

_WORDS = ["yes", "no", "cancel order PED-1001", "what?", "PED-1002", "never mind", "sure"]
_CALLS = [
    ("start_retail_order_cancel", {"order_id": "PED-1001"}),
    ("start_retail_order_track", {}),
    ("set_order_id", {"order_id": "PED-1002"}),
    ("cancel_transaction", {}),
    ("reject_transaction", {}),
    ("correct_transaction", {"parameter": "order_id", "value": "PED-1003"}),
    ("confirm_transaction", {}),
]
_RESULTS = [
    ({"success": True, "eligible": True}, True),
    ({"eligible": False}, True),
    ({"error": True}, False),
    ({"success": False}, False),
]
_event = st.one_of(
    st.tuples(st.just("words"), st.sampled_from(_WORDS)),
    st.tuples(st.just("calls"), st.lists(st.sampled_from(_CALLS), max_size=3)),
)


def _drive(events: list[tuple[str, Any]], results: list[int]) -> list[tuple[Desk, Action]]:
    """Run a conversation as the shell does; each invocation must leave its input unchanged."""
    desk, out, picks = Desk(), [], iter(results * 8 + [0] * 16)
    for n, (kind, value) in enumerate(events, start=1):
        if kind == "words":
            turned = _pure(caller_turn, ctx(n), desk, value)
        else:
            for name, args in value:
                if refusal(ctx(n), desk, name, "yes") is None:
                    desk = collect(desk, name, args)
            step = route_calls if desk.calls else continue_turn
            turned = _pure(step, ctx(n), desk)
        while isinstance(turned.next, RunTool):  # the host runs every call it is given
            result, ok = _RESULTS[next(picks) % len(_RESULTS)]
            after = ran(ctx(n), turned.desk, turned.next.call, result, ok)
            turned = _pure(continue_turn, ctx(n), after)
        desk, action = to_action(ctx(n), turned.desk, turned.next)
        out.append((desk, action))
    return out


def _pure(fn: Any, context: DeskContext, desk: Desk, *args: Any) -> Turned:
    before = copy.deepcopy(desk)
    turned = fn(context, desk, *args)
    assert desk == before, "an invocation changed the desk it was given"
    assert isinstance(turned.next, Speak | RunTool | PromptModel)
    return turned


@settings(max_examples=60, deadline=None)
@given(st.lists(_event, min_size=1, max_size=8), st.lists(st.integers(0, 3), max_size=8))
def test_the_desk_is_deterministic_and_changes_nothing_it_is_given(
    events: list[tuple[str, Any]], results: list[int]
) -> None:
    assert _drive(events, results) == _drive(events, results)
