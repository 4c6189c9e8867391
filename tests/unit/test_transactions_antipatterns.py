"""Transaction anti-patterns (rebuilding from the latest message, a keyword interrupting a
pending parameter, clearing the latch early …): each has a test that fails if it returns."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.storage_support.intents import AT, CANCEL, CONTEST, TRACK, catalog, turn

from pipecat_steward.core.transactions import (
    ACTIVE_STATUSES,
    CANCEL_TOOL,
    CONFIRMATION_TOOLS,
    ConfirmedByCode,
    StayAndIgnoreKeyword,
    TransactionState,
    TransactionStatus,
    TurnInputs,
    apply,
    confirmation_gate,
    confirmation_text,
    diagnose,
    finish,
    merge_arguments,
    route_turn,
    start,
    visible_tools,
)
from pipecat_steward.exceptions import StateError

S = TransactionStatus
CAT = catalog()


def play(state: TransactionState, *turns: TurnInputs, checkpoint: bool = False) -> TransactionState:
    for inputs in turns:
        state = apply(CAT, state, route_turn(CAT, state, inputs), at=AT)
        if checkpoint:
            state = TransactionState.from_json(state.to_json())
    return state


def contest_turns() -> tuple[TurnInputs, ...]:
    return (
        turn("I want to contest a charge", ("start_charge_contest", {"quote": "contest a charge"})),
        turn("the gym membership", ("set_contest_subject", {"subject": "gym"})),
        turn("R$ 71.99", ("set_contest_amount", {"amount": "71.99"})),
    )


def test_not_rebuilding_from_the_latest_message_only() -> None:
    state = play(TransactionState(), *contest_turns())
    # Rebuilding from the last turn alone would hold {"amount": "71.99"} and ask for the subject.
    assert state.active_transaction.arguments == {"subject": "gym", "amount": "71.99"}  # type: ignore[union-attr]
    assert state.missing_parameters == ()
    assert merge_arguments(
        {"subject": "gym"}, {"amount": "1", "subject": None}, ("subject", "amount")
    ) == {"subject": "gym", "amount": "1"}


def test_not_using_selected_tool_call_as_the_latch() -> None:
    names = {f.name for f in dataclasses.fields(TransactionState)}
    assert {"active_transaction", "last_transaction", "transaction_status"} <= names
    assert not names & {"selected_tool_call", "pending_tool_call"}
    # A restored state carrying only the latch routes correctly: the latch alone is enough.
    latched = play(TransactionState(), *contest_turns()[:2]).to_dict()
    restored = TransactionState.from_dict(
        {
            "active_transaction": latched["active_transaction"],
            "transaction_status": "COLLECTING_PARAMETERS",
        }
    )
    assert route_turn(CAT, restored, contest_turns()[2]).__class__.__name__ == "Fill"


def test_not_removing_active_transaction_as_redundant() -> None:
    data = TransactionState().to_dict()
    assert "active_transaction" in data and "last_transaction" in data  # declared even when empty
    state = play(TransactionState(), *contest_turns()[:2])
    dropped = TransactionState.from_dict({**state.to_dict(), "active_transaction": None})
    found = diagnose(dropped)
    assert found is not None and found.code == "active_status_without_transaction"


@pytest.mark.parametrize("said", ["order", "my order", "it's about the order", "the order number is", "ORDER!"])
def test_a_generic_keyword_order_does_not_interrupt_order_id_collection(said: str) -> None:
    state = start(CAT, TransactionState(), CANCEL, at=AT)
    decision = route_turn(CAT, state, turn(said, ("start_retail_order_track", {"quote": said})))
    assert decision == StayAndIgnoreKeyword(TRACK)
    assert apply(CAT, state, decision, at=AT).active_transaction.intent == CANCEL  # type: ignore[union-attr]


def test_not_keeping_parameters_in_node_local_variables() -> None:
    in_memory = play(TransactionState(), *contest_turns())
    through_checkpoints = play(TransactionState(), *contest_turns(), checkpoint=True)
    assert through_checkpoints == in_memory


def test_not_duplicating_confirmation_in_the_prompt() -> None:
    state = play(TransactionState(), *contest_turns())
    assert state.transaction_status == S.AWAITING_CONFIRMATION
    assert confirmation_text(CAT, state) == "Contest the gym charge of 71.99?"
    assert confirmation_gate(state, "yes") == ConfirmedByCode()
    shown = visible_tools(CAT, state)
    assert shown[: len(CONFIRMATION_TOOLS)] == CONFIRMATION_TOOLS  # no setter to improvise with
    assert not any(t.startswith("set_") for t in shown) and "start_charge_contest" not in shown


@pytest.mark.parametrize("status", sorted(ACTIVE_STATUSES | {S.IDLE}))
def test_the_latch_is_never_cleared_before_a_terminal_state(status: TransactionStatus) -> None:
    state = start(CAT, TransactionState(), CANCEL, at=AT)
    with pytest.raises(StateError, match="only with a terminal status"):
        finish(state, status, at=AT)


CALLS = st.sampled_from(
    [
        ("set_order_id", {"order_id": "PED-1"}),
        ("set_contest_subject", {"subject": "gym"}),
        ("set_contest_amount", {"amount": "9"}),
        ("set_period", {"period": "May"}),
        (CANCEL_TOOL, {}),
        ("start_retail_order_cancel", {"quote": "cancel"}),
        ("start_retail_order_track", {"quote": "order"}),
        ("start_retail_order_track", {"quote": "track it"}),
        ("start_charge_contest", {}),
        ("start_billing_statement", {"quote": "bill"}),
        ("unrelated", {"x": 1}),
    ]
)
TURNS = st.lists(st.lists(CALLS, max_size=3), max_size=12)


@settings(max_examples=300, deadline=None)
@given(TURNS)
def test_random_turns_keep_the_latch_invariants(turns: list[list[tuple[str, dict[str, Any]]]]) -> None:
    state = TransactionState()
    for calls in turns:
        if state.transaction_status not in (S.IDLE, S.COLLECTING_PARAMETERS, *TERMINAL):
            break  # past collection: confirmation and execution are other tests' business
        before = state.active_transaction
        decision = route_turn(CAT, state, turn("", *calls))
        state = apply(CAT, state, decision, at=AT)
        assert diagnose(state) is None
        # The latch is only released with a terminal status, and arguments only grow.
        if before is not None and state.active_transaction is None:
            assert state.transaction_status in TERMINAL
        after = state.active_transaction
        if before is not None and after is not None and after.intent == before.intent:
            assert set(before.arguments) <= set(after.arguments)
        assert state.missing_parameters == (after.missing_parameters if after else ())
        assert TransactionState.from_json(state.to_json()) == state


TERMINAL = (S.COMPLETED, S.CANCELLED, S.OUT_OF_SCOPE, S.FAILED)


def test_interrupted_transactions_survive_random_walks_with_their_arguments() -> None:
    state = play(
        TransactionState(),
        *contest_turns()[:2],
        turn("track my order", ("start_retail_order_track", {"quote": "track my order"})),
        turn("never mind", (CANCEL_TOOL, {})),
        turn("back to the charge", ("start_charge_contest", {})),
    )
    assert state.active_transaction.intent == CONTEST  # type: ignore[union-attr]
    assert state.active_transaction.arguments == {"subject": "gym"}  # type: ignore[union-attr]
