"""Routing precedence while a transaction collects (a pending answer first, then an explicit
cancel, an unambiguous new intent; a same-domain keyword never interrupts; ambiguity keeps the
transaction), one test per rule and example,
plus the latch's lifecycle (start, merge, interrupt, resume, cancel) and its JSON round trip."""

from __future__ import annotations

import pytest
from tests.storage_support.intents import AT, BILL, CANCEL, CONTEST, TRACK, catalog, turn
from tests.unit.engine.flows import TOY

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.core.transactions import (
    CANCEL_TOOL,
    CONFIRMATION_TOOLS,
    Cancel,
    Catalog,
    Clarify,
    Fill,
    Idle,
    IntentSpec,
    InterruptAndRoute,
    Start,
    StayAndIgnoreKeyword,
    TransactionState,
    TransactionStatus,
    apply,
    intent_from_flow,
    resumable,
    resume,
    route_turn,
    start,
    visible_tools,
)
from pipecat_steward.exceptions import ConfigError, StateError

S = TransactionStatus
CAT = catalog()


def collecting(intent: str, **args: object) -> TransactionState:
    return start(CAT, TransactionState(), intent, args, at=AT)  # type: ignore[arg-type]


# --- the routing examples, one by one ----------------------------------------------------------


def test_row1_bare_order_id_fills_the_pending_parameter() -> None:
    state = collecting(CANCEL)
    decision = route_turn(CAT, state, turn("PED-1001", ("set_order_id", {"order_id": "PED-1001"})))
    assert decision == Fill({"order_id": "PED-1001"})
    after = apply(CAT, state, decision, at=AT)
    assert after.active_transaction is not None
    assert after.active_transaction.intent == CANCEL
    assert after.active_transaction.arguments == {"order_id": "PED-1001"}
    assert after.missing_parameters == ()
    assert after.transaction_status == S.PRE_VALIDATION  # cancel has a pre-validation task


def test_row2_the_word_order_does_not_switch_to_tracking() -> None:
    state = collecting(CANCEL)
    said = "the order is PED-1001"
    spurious = ("start_retail_order_track", {"quote": said})
    decision = route_turn(CAT, state, turn(said, spurious, ("set_order_id", {"value": "PED-1001"})))
    assert decision == Fill({"order_id": "PED-1001"})
    assert apply(CAT, state, decision, at=AT).active_transaction.intent == CANCEL  # type: ignore[union-attr]


def test_row3_contestation_amount_on_the_second_turn_keeps_the_subject() -> None:
    state = collecting(CONTEST)
    state = apply(CAT, state, route_turn(CAT, state, turn("the gym", ("set_contest_subject", {"subject": "gym"}))), at=AT)
    assert state.missing_parameters == ("amount",)
    decision = route_turn(CAT, state, turn("R$ 71.99", ("set_contest_amount", {"amount": "71.99"})))
    assert decision == Fill({"amount": "71.99"})
    after = apply(CAT, state, decision, at=AT)
    assert after.active_transaction.arguments == {"subject": "gym", "amount": "71.99"}  # type: ignore[union-attr]
    assert after.transaction_status == S.AWAITING_CONFIRMATION


def test_row4_forget_it_show_my_bill_cancels_and_routes() -> None:
    state = collecting(CANCEL)
    said = "forget it, show my bill"
    decision = route_turn(CAT, state, turn(said, (CANCEL_TOOL, {}), ("start_billing_statement", {"quote": said})))
    assert decision == Cancel(then_start=BILL)
    after = apply(CAT, state, decision, at=AT)
    assert after.last_transaction is not None
    assert (after.last_transaction.intent, after.last_transaction.status) == (CANCEL, S.CANCELLED)
    assert after.active_transaction is not None and after.active_transaction.intent == BILL
    assert after.transaction_status == S.COLLECTING_PARAMETERS


def test_row5_track_my_order_interrupts_and_keeps_the_cancellation_resumable() -> None:
    state = collecting(CANCEL)
    decision = route_turn(CAT, state, turn("track my order", ("start_retail_order_track", {"quote": "track my order"})))
    assert decision == InterruptAndRoute(TRACK, CANCEL)
    after = apply(CAT, state, decision, at=AT)
    assert after.active_transaction.intent == TRACK  # type: ignore[union-attr]
    assert [t.intent for t in after.interrupted] == [CANCEL]
    assert after.interrupted[0].status == S.COLLECTING_PARAMETERS


# --- the five rules beyond the table --------------------------------------------------------


def test_rule1_an_extractor_proposal_alone_fills_a_missing_parameter() -> None:
    decision = route_turn(CAT, collecting(CANCEL), turn("PED-7", order_id="PED-7"))
    assert decision == Fill({"order_id": "PED-7"})


def test_rule1_a_proposal_never_overrides_a_collected_parameter() -> None:
    state = collecting(CONTEST, subject="gym")
    decision = route_turn(CAT, state, turn("it was the pool", subject="pool"))
    assert decision == Clarify(("amount",), "no_answer")


def test_rule1_fill_beats_an_explicit_cancel_in_the_same_turn() -> None:
    decision = route_turn(CAT, collecting(CANCEL), turn("PED-1", (CANCEL_TOOL, {}), ("set_order_id", {"order_id": "PED-1"})))
    assert decision == Fill({"order_id": "PED-1"})


def test_rule2_explicit_cancel_alone_cancels() -> None:
    state = collecting(CANCEL)
    decision = route_turn(CAT, state, turn("never mind", (CANCEL_TOOL, {})))
    assert decision == Cancel()
    after = apply(CAT, state, decision, at=AT)
    assert after.active_transaction is None
    assert after.transaction_status == S.CANCELLED


def test_rule3_a_different_domain_interrupts_without_cues() -> None:
    decision = route_turn(CAT, collecting(CANCEL), turn("about a charge", ("start_charge_contest", {})))
    assert decision == InterruptAndRoute(CONTEST, CANCEL)


def test_rule3_a_start_call_carrying_parameters_prefills_the_new_intent() -> None:
    state = collecting(CONTEST, subject="gym")
    decision = route_turn(CAT, state, turn("where is order PED-9", ("start_retail_order_track", {"order_id": "PED-9"})))
    assert decision == InterruptAndRoute(TRACK, CONTEST, {"order_id": "PED-9"})
    after = apply(CAT, state, decision, at=AT)
    assert after.transaction_status == S.AWAITING_CONFIRMATION


def test_rule4_a_generic_same_domain_keyword_does_not_interrupt() -> None:
    state = collecting(CANCEL)
    decision = route_turn(CAT, state, turn("it's about my order", ("start_retail_order_track", {"quote": "my order"})))
    assert decision == StayAndIgnoreKeyword(TRACK)
    assert apply(CAT, state, decision, at=AT) == state


def test_rule4_reasking_for_the_active_intent_does_not_restart_it() -> None:
    state = collecting(CONTEST, subject="gym")
    decision = route_turn(CAT, state, turn("contest a charge", ("start_charge_contest", {"quote": "contest"})))
    assert decision == Clarify(("amount",), "no_answer")
    assert apply(CAT, state, decision, at=AT).active_transaction.arguments == {"subject": "gym"}  # type: ignore[union-attr]


def test_rule5_no_answer_keeps_the_transaction_and_clarifies() -> None:
    state = collecting(CANCEL)
    decision = route_turn(CAT, state, turn("hmm, what?"))
    assert decision == Clarify(("order_id",), "no_answer")
    assert apply(CAT, state, decision, at=AT) == state


def test_rule5_two_competing_intents_clarify() -> None:
    said = "track it and dispute the charge"
    calls = (("start_retail_order_track", {"quote": said}), ("start_charge_contest", {"quote": said}))
    decision = route_turn(CAT, collecting(CANCEL), turn(said, *calls))
    assert decision == Clarify(("order_id",), "competing_intents", (TRACK, CONTEST))


def test_another_intents_setter_is_not_an_answer() -> None:
    decision = route_turn(CAT, collecting(CANCEL), turn("71.99", ("set_contest_amount", {"amount": "71.99"})))
    assert decision == Clarify(("order_id",), "no_answer")


def test_idle_routing_starts_or_stays_idle() -> None:
    idle = TransactionState()
    assert route_turn(CAT, idle, turn("hi")) == Idle()
    assert route_turn(CAT, idle, turn("cancel PED-3", ("start_retail_order_cancel", {"order_id": "PED-3"}))) == Start(CANCEL, {"order_id": "PED-3"})


def test_route_turn_refuses_a_transaction_past_collection() -> None:
    state = collecting(CONTEST, subject="gym", amount="9")
    with pytest.raises(StateError, match="route_confirmation"):
        route_turn(CAT, state, turn("yes"))


# --- lifecycle ----------------------------------------------------------------------------------


def test_interrupted_transaction_resumes_with_its_arguments() -> None:
    state = collecting(CONTEST, subject="gym")
    state = apply(CAT, state, InterruptAndRoute(TRACK, CONTEST), at=AT)
    state = apply(CAT, state, Cancel(), at=AT)
    assert resumable(state) is not None and resumable(state).intent == CONTEST  # type: ignore[union-attr]
    back = resume(CAT, state, at=AT)
    assert back.active_transaction.arguments == {"subject": "gym"}  # type: ignore[union-attr]
    assert back.missing_parameters == ("amount",)
    assert back.interrupted == ()


def test_starting_an_interrupted_intent_resumes_it_instead_of_a_fresh_one() -> None:
    state = apply(CAT, collecting(CONTEST, subject="gym"), InterruptAndRoute(TRACK, CONTEST), at=AT)
    state = apply(CAT, state, Cancel(then_start=CONTEST), at=AT)
    assert state.active_transaction.arguments == {"subject": "gym"}  # type: ignore[union-attr]
    assert state.active_transaction.sequence == 1  # type: ignore[union-attr]


def test_start_while_latched_is_refused() -> None:
    with pytest.raises(StateError, match="InterruptAndRoute or Cancel"):
        start(CAT, collecting(CANCEL), TRACK, at=AT)


def test_visible_tools_per_phase() -> None:
    assert set(visible_tools(CAT, TransactionState())) == {f"start_{n}" for n in (CANCEL, TRACK, CONTEST, BILL)}
    tools = visible_tools(CAT, collecting(CONTEST))
    assert tools[:3] == ("set_contest_subject", "set_contest_amount", CANCEL_TOOL)
    assert "start_charge_contest" not in tools and "start_retail_order_track" in tools
    confirming = visible_tools(CAT, collecting(CONTEST, subject="a", amount="1"))
    assert confirming == (*CONFIRMATION_TOOLS, *(f"start_{n}" for n in (CANCEL, TRACK, BILL)))
    assert visible_tools(CAT, collecting(CANCEL, order_id="P")) == ()  # pre-validation is code


def test_state_round_trips_through_json_mid_collection() -> None:
    state = apply(CAT, collecting(CONTEST, subject="gym"), InterruptAndRoute(TRACK, CONTEST), at=AT)
    text = state.to_json()
    assert TransactionState.from_json(text) == state
    assert '"missing_parameters":["order_id"]' in text


def test_from_json_rejects_garbage_with_a_state_error() -> None:
    with pytest.raises(StateError, match="not a serialised transaction state"):
        TransactionState.from_json('{"active_transaction": {"intent": 1}}')
    with pytest.raises(StateError):
        TransactionState.from_json("[1]")


def test_catalog_reports_every_problem_with_its_path() -> None:
    with pytest.raises(ConfigError) as info:
        Catalog.of(
            [
                IntentSpec("bad name", (), "", "Do {thing}?"),
                IntentSpec("x", ("a",), "t", "{a}"),
                IntentSpec("x", ("a",), "t", "{a}", setters={"set_b": ("b",)}),
            ]
        )
    text = str(info.value)
    for part in (
        "intents[0].name",
        "intents[0].required",
        "intents[0].executor",
        "intents[0].confirmation: unknown field(s) thing",
        "intents[2].setters.set_b",
        "'x' is declared twice",
    ):
        assert part in text
    with pytest.raises(ConfigError, match="unknown intent 'nope'; known: "):
        CAT.intent("nope")


def test_intent_from_flow_takes_the_terminal_task_as_the_transaction() -> None:
    spec = intent_from_flow("book", compile_flow(TOY), confirmation="Book for {name}?")
    assert spec.executor == "make_reservation"
    assert spec.required == ("num_guests", "date", "chosen_time", "name")
    assert spec.setters["set_date"] == ("date",)
    with pytest.raises(ConfigError, match="terminal: true"):
        intent_from_flow("x", compile_flow({"slots": [{"name": "a", "setter": "set_a"}]}), confirmation="")


# --- detours while confirming, honest pre-validation failures --------------------------------


def test_a_detour_while_confirming_sets_the_transaction_aside_with_its_arguments() -> None:
    from pipecat_steward.core.transactions import (
        Detour,
        ToolUse,
        apply_confirmation,
        route_confirmation,
    )

    confirming = collecting(CONTEST, subject="gym", amount="71.99")
    assert confirming.transaction_status == TransactionStatus.AWAITING_CONFIRMATION
    calls = [ToolUse("start_retail_order_track", {"order_id": "PED-1003", "quote": "track first"})]
    decision = route_confirmation(CAT, confirming, calls)
    assert decision == Detour(TRACK, {"order_id": "PED-1003"})
    state = apply_confirmation(CAT, confirming, decision, scope="s", at=AT)
    assert state.active_transaction is not None and state.active_transaction.intent == TRACK
    parked = resumable(state)
    assert parked is not None and parked.intent == CONTEST
    assert parked.arguments == {"subject": "gym", "amount": "71.99"}
    assert parked.status == TransactionStatus.AWAITING_CONFIRMATION


@pytest.mark.parametrize(
    ("calls", "kind"),
    [
        ([("confirm_transaction", {}), ("start_retail_order_track", {})], "Confirm"),
        ([("reject_transaction", {}), ("start_retail_order_track", {})], "Reject"),
        ([("start_charge_contest", {})], "Unclear"),  # its own start is no detour
        ([("start_retail_order_track", {})], "Detour"),
    ],
)
def test_confirmation_precedence_puts_a_detour_last(
    calls: list[tuple[str, dict[str, object]]], kind: str
) -> None:
    from pipecat_steward.core.transactions import ToolUse, route_confirmation

    confirming = collecting(CONTEST, subject="gym", amount="71.99")
    decision = route_confirmation(CAT, confirming, [ToolUse(n, a) for n, a in calls])  # type: ignore[arg-type]
    assert type(decision).__name__ == kind


def test_a_pre_validation_backend_error_fails_the_transaction_not_out_of_scope() -> None:
    from pipecat_steward.core.transactions import record_pre_validation_failure

    checking = collecting(CANCEL, order_id="PED-1001")
    assert checking.transaction_status == TransactionStatus.PRE_VALIDATION
    state = record_pre_validation_failure(checking, result={"error": True}, at=AT)
    assert state.active_transaction is None and state.transaction_status == TransactionStatus.FAILED
    assert state.last_transaction is not None and state.last_transaction.arguments == {
        "order_id": "PED-1001"
    }
