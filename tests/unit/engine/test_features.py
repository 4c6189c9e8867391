"""Engine features one by one: visibility, auto-confirm, slot errors, steer-back,
announce cascade, event pre-fill, conditional slots, rich responses, corrections, declines,
parallel tasks and the gate slot."""

from __future__ import annotations

from typing import Any

import pytest

from pipecat_steward.core.slots import (
    compile_flow,
    fill_slots,
    is_affirmative,
    step,
)
from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.conversation import Conversation, Inference, RecordedCall

from .flows import BELLA, toy
from .test_worked_examples import FirstChoice, calls, check_availability, make_reservation


@pytest.mark.parametrize(
    ("text", "pure"),
    [
        ("Yes", True),
        ("yes.", True),
        ("Yes, that's correct", True),
        ("That's right", True),
        ("sounds good", True),
        ("Yes, that's right, thank you so much", True),
        ("Yes, but make it 6", False),
        ("yes actually change it", False),
        ("Yea, also my wife has a shellfish allergy", False),
        ("Yes, 6 people", False),
        ("no", False),
        ("", False),
    ],
)
def test_affirmative_detection(text: str, pure: bool) -> None:
    assert is_affirmative(text) is pure


def readback_toy(**extra: Any) -> Conversation:
    config = toy(**{"slot:num_guests": {"requires_readback": True}, "slot:date": {"requires_readback": True}})
    config.update(extra)
    return Conversation(compile_flow(config), {"check_availability": check_availability}, rng=FirstChoice())


def test_yes_with_new_content_goes_to_the_llm_with_the_readback_in_force() -> None:
    """Code never confirms a reply that carries content: the LLM confirms and sets the rest."""
    conv = readback_toy()
    conv.turn("Hi")
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    t = conv.turn("Yep, and we'd like July 18th", calls(("confirm_pending", {}), ("set_date", {"d": "2026-07-18"})))
    first = t.actions[0]
    assert first.phase == "readback" and not first.preempt and not first.calls
    assert "<readback_protocol>" in first.suffix
    assert conv.state.record("num_guests").status == "filled"
    assert conv.state.record("date").status == "pending"


@pytest.mark.parametrize("reply", ["Yes, 6 people", "yes for 6", "sure, six of us", "Yes please, for eight", "Okay 7 PM"])
def test_a_yes_that_carries_a_value_is_never_confirmed_by_code(reply: str) -> None:
    conv = readback_toy()
    conv.turn("Hi")
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    t = conv.turn(reply)
    assert not any(c.name == "confirm_pending" for c in t.fired)
    assert conv.state.record("num_guests").status == "pending"


def test_auto_confirm_only_with_pending_from_a_prior_turn() -> None:
    conv = readback_toy()
    conv.turn("Hi")
    # The setter and "yes" in the same turn: the readback was never heard, nothing is confirmed.
    t = conv.turn("4 people, yes", calls(("set_num_guests", {"n": 4})))
    assert not any(c.name == "confirm_pending" for c in t.fired)
    assert conv.state.record("num_guests").status == "pending"


def test_slot_errors_are_joined_counted_and_exhaust() -> None:
    config = toy(
        **{
            "slot:num_guests": {
                "validation": {
                    "max_retries": 2,
                    "errors": {"out_of_range": "We seat 1 to 8 guests."},
                    "on_exhaust": {
                        "say": "Please call us at 555-0100.",
                        "then": {"tool": "transfer", "args": {"why": "{date}"}},
                    },
                }
            }
        }
    )
    transfers: list[dict[str, Any]] = []
    tools = {
        "set_num_guests": lambda n: (
            {"error": True, "error_code": "out_of_range"} if n > 8 else {"stored": True, "value": n}
        ),
        "set_date": lambda d: {"error": True, "error_code": "past_date"},
        "transfer": lambda **a: transfers.append(a) or {"ok": True},
    }
    conv = Conversation(compile_flow(config), tools)
    conv.turn("Hi")
    t = conv.turn("12 people yesterday", calls(("set_num_guests", {"n": 12}), ("set_date", {"d": "x"})))
    assert t.said == "We seat 1 to 8 guests. What date works for you?", "all errors of a turn, joined"
    assert conv.state.retries == {"slot:num_guests": 1, "slot:date": 1}
    assert [e.tag for e in t.events].count("slot_error") == 2
    t = conv.turn("15 then", calls(("set_num_guests", {"n": 15})))
    assert t.said == "Please call us at 555-0100." and conv.state.status == "escalated"
    assert [c.name for c in t.fired] == ["transfer"]
    assert transfers == [{"why": "{date}"}], "unknown placeholders stay as written"


def test_prerequisite_and_validate_against() -> None:
    flow = compile_flow(BELLA)
    state = fill_slots(flow, SessionState(), {"party_size": 2, "preferred_date": "2026-06-17"}).state
    times = {"find_available_times": lambda **_: {"success": True, "available_times": "18:00, 20:30"}}
    conv = Conversation(flow, times, state=state)
    assert conv.turn("Hi").said == "We have 18:00, 20:30. Which time works?"
    t = conv.turn("nine pm please", calls(("set_selected_time", {"value": "21:00"})))
    assert t.said == "That time isn't open. We have 18:00, 20:30."
    assert conv.state.record("selected_time").status == "empty"


def test_steer_back_soft_hard_yield_escalate() -> None:
    config = toy()
    config["steer_back"] = {
        "soft_after": 2,
        "hard_after": 3,
        "escalate_after": 5,
        "on_exhaust": {"say": "Let me get a colleague.", "then": "escalate"},
    }
    conv = Conversation(compile_flow(config), {"escalate": lambda: {"ok": True}})
    conv.turn("Hi")  # the greeting turn does not count
    assert conv.state.steer_back_turns == 0
    conv.turn("what's the weather?")  # 1
    t2 = conv.turn("do you like jazz?")  # 2 → soft
    assert [h.tag for h in t2.actions[0].hints] == ["steer_back"]
    assert not t2.actions[0].preempt
    t3 = conv.turn("and blues?")  # 3 → hard: the LLM runs with the firm directive
    assert not t3.actions[0].preempt and [h.tag for h in t3.actions[0].hints] == ["steer_back"]
    assert "ask exactly: How many guests?" in t3.actions[0].suffix
    assert t3.said == "How many guests?"
    t4 = conv.turn("hmm")  # yield: the LLM runs free, the counter does not move
    assert not t4.actions[0].preempt and conv.state.steer_back_turns == 3
    assert any(e.tag == "steer_back_yield" for e in t4.events)
    t5 = conv.turn("still no")  # 4 → hard again
    assert any(e.tag == "steer_back_hard" for e in t5.events)
    conv.turn("nope")  # yield
    t6 = conv.turn("...")  # 5 → escalate
    assert t6.said == "Let me get a colleague." and conv.state.status == "escalated"


def test_a_hard_steer_back_never_drops_an_answer() -> None:
    config = toy()
    config["steer_back"] = {"soft_after": 2, "hard_after": 3, "escalate_after": 9}
    conv = Conversation(compile_flow(config), {"check_availability": check_availability})
    conv.turn("Hi")
    conv.turn("what's the weather?")
    conv.turn("do you like jazz?")
    t = conv.turn("Sure, it's 4 of us", calls(("set_num_guests", {"n": 4})))
    assert any(e.tag == "steer_back_hard" for e in t.events)
    assert [c.name for c in t.llm_calls] == ["set_num_guests"]
    assert conv.state.record("num_guests").value == 4
    assert "How many guests?" not in t.said


def test_progress_resets_steer_back() -> None:
    conv = Conversation(compile_flow(toy()), {"check_availability": check_availability})
    conv.turn("Hi")
    conv.turn("weather?")
    assert conv.state.steer_back_turns == 1
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    assert conv.state.steer_back_turns == 0


def test_a_confirmation_by_code_is_progress() -> None:
    conv = readback_toy()
    conv.turn("Hi")
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    t = conv.turn("Yes")
    assert any(c.name == "confirm_pending" for c in t.fired)
    assert conv.state.steer_back_turns == 0


ANNOUNCE = {
    "slots": [
        {
            "name": "welcome",
            "source": "announce",
            "message": "Welcome to Bella Notte!",
            "preempt": False,
        },
        {
            "name": "terms",
            "source": "announce",
            "message": "Calls may be recorded.",
            "preempt": False,
        },
        {"name": "party_size", "setter": "set_party", "ask": "How many guests?"},
        {
            "name": "disclosure",
            "source": "announce",
            "message": "A deposit of $20 applies.",
            "requires": ["party_size"],
            "response": [{"type": "payload", "data": {"card": "deposit {party_size}"}}],
        },
        {"name": "confirmation", "source": "task:Book"},
    ],
    "tasks": [
        {
            "name": "Book",
            "tool": "book",
            "inputs": ["party_size"],
            "requires": ["disclosure"],
            "outputs": {"confirmation": "confirmation"},
            "terminal": True,
            "then_say": "Booked: {confirmation}.",
        }
    ],
}


def test_announce_cascade_and_task_requires() -> None:
    conv = Conversation(compile_flow(ANNOUNCE), {"book": lambda **_: {"success": True, "confirmation": "B-1"}})
    t1 = conv.turn("Hi")
    assert t1.actions[0].directive == "Welcome to Bella Notte! Calls may be recorded. How many guests?"
    assert not t1.actions[0].preempt, "preempt: false announces guide the LLM"
    t2 = conv.turn("two", calls(("set_party", {"n": 2})))
    fire = next(a for a in t2.actions if a.calls)
    assert fire.preempt and fire.force_preempt and fire.message == "A deposit of $20 applies."
    assert fire.response == ({"type": "payload", "data": {"card": "deposit 2"}},)
    assert t2.said == "A deposit of $20 applies. Booked: B-1."


def test_event_prefill_skips_the_question() -> None:
    conv = Conversation(compile_flow(BELLA), {}, event_data={"party_size": 4})
    t1 = conv.turn("Hi")
    assert conv.state.record("party_size").status == "filled"
    assert conv.state.record("party_size").origin == "event"
    assert t1.actions[0].directive == "What date would you like?"
    assert any(e.tag == "fill_slots" for e in t1.events)


def test_fill_slots_skip_readback_false_goes_to_pending() -> None:
    flow = compile_flow(BELLA)
    result = fill_slots(flow, SessionState(), {"party_size": 4, "nope": 1}, skip_readback=False)
    assert result.filled == ("party_size",) and result.skipped == ("nope",)
    assert result.state.record("party_size").status == "pending"
    assert fill_slots(flow, fill_slots(flow, SessionState(), {"party_size": 4}).state, {"party_size": 5}).skipped == ("party_size",)


CONDITIONAL = toy()
CONDITIONAL["slots"].insert(
    2,
    {
        "name": "contact_phone",
        "setter": "set_phone",
        "condition": "lambda filled: int(filled.get('num_guests', 0)) >= 5",
        "ask": "For large parties, we need a contact number.",
    },
)


def test_conditional_slot_activation_and_auto_deactivation() -> None:
    conv = Conversation(compile_flow(CONDITIONAL), {"check_availability": check_availability})
    conv.turn("Hi")
    t = conv.turn("6 of us", calls(("set_num_guests", {"n": 6})))
    assert t.actions[-1].directive == "What date works for you?"
    conv.turn("tomorrow", calls(("set_date", {"d": "2026-07-18"})))
    assert conv.turn("ok").actions[0].directive == "For large parties, we need a contact number."
    conv.turn("555 1234", calls(("set_phone", {"p": "555-1234"})))
    assert conv.state.record("contact_phone").value == "555-1234"
    t = conv.turn("actually we are 3", calls(("correct_slot", {"slot": "num_guests", "value": 3})))
    assert conv.state.record("contact_phone").status == "empty"
    assert any(e.tag == "slot_deactivated" for e in t.events)


def test_correction_invalidates_dependents_and_refires() -> None:
    seen: list[dict[str, Any]] = []

    def availability(**args: Any) -> dict[str, Any]:
        seen.append(args)
        return {"success": True, "open_slots": "8 PM" if args["date"] == "2026-07-19" else "6 PM"}

    conv = Conversation(compile_flow(toy()), {"check_availability": availability, "make_reservation": make_reservation})
    conv.turn("Hi")
    conv.turn("4 on the 18th", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"})))
    conv.turn("6 PM", calls(("set_chosen_time", {"t": "18:00"})))
    assert conv.state.record("chosen_time").status == "filled"
    t = conv.turn("Actually make it the 19th", calls(("correct_slot", {"slot": "date", "value": "2026-07-19"})))
    assert t.llm_calls[0].result["invalidated"] == ["open_slots", "chosen_time"]
    assert seen[-1] == {"num_guests": 4, "date": "2026-07-19"}, "the affected task re-fired"
    assert conv.state.record("open_slots").value == "8 PM"
    assert conv.state.record("chosen_time").status == "empty"
    assert t.said == "We have 8 PM. Which time works?"


def test_decline_optional_never_asked_and_required_escalates() -> None:
    config = toy(**{"slot:name": {"required": False, "default": "guest"}})
    conv = Conversation(compile_flow(config), {"check_availability": check_availability, "make_reservation": make_reservation})
    conv.turn("Hi")
    conv.turn("4 on the 18th", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"})))
    t = conv.turn("rather not give a name, 6 PM", calls(("decline_slot", {"slot": "name"}), ("set_chosen_time", {"t": "18:00"})))
    assert conv.state.record("name").status == "declined"
    assert t.fired[-1].args["name"] == "guest", "an optional declined input takes its default"
    assert conv.state.status == "complete"

    conv = Conversation(compile_flow(toy()), {"handover": lambda **_: {"ok": True}})
    conv.turn("Hi")
    t = conv.turn("I won't say how many", calls(("decline_slot", {"slot": "num_guests"})))
    assert conv.state.status == "escalated"
    assert t.said.startswith("I can't complete this without num guests.")


PARALLEL = {
    "slots": [
        {"name": "account", "setter": "set_account"},
        {"name": "verified", "source": "task:Verify"},
        {"name": "balance", "source": "task:Balance"},
    ],
    "tasks": [
        {
            "name": "Verify",
            "tool": "verify",
            "inputs": ["account"],
            "outputs": {"verified": "verified"},
        },
        {
            "name": "Balance",
            "tool": "balance",
            "inputs": ["account"],
            "outputs": {"balance": "balance"},
        },
    ],
}


def test_independent_ready_tasks_fire_in_the_same_invocation() -> None:
    tools = {
        "verify": lambda account: {"success": True, "verified": True},
        "balance": lambda account: {"success": True, "balance": 12},
    }
    conv = Conversation(compile_flow(PARALLEL), tools)
    conv.turn("Hi")
    t = conv.turn("account 42", calls(("set_account", {"a": "42"})))
    fire = next(a for a in t.actions if a.calls)
    assert [c.name for c in fire.calls] == ["verify", "balance"]
    assert conv.state.succeeded == ["Verify", "Balance"]
    assert conv.state.status == "complete"


def test_gate_slot_captures_first_turn_text() -> None:
    config = toy()
    config["gate_slot"] = "num_guests"
    conv = Conversation(compile_flow(config), {"check_availability": check_availability})
    t1 = conv.turn("Table for 4 on the 18th please", calls(("set_num_guests", {"n": 4})))
    assert t1.actions[0].phase == "gate"
    assert conv.state.gate_user_text == "Table for 4 on the 18th please"
    context = next(h for h in t1.actions[-1].hints if h.tag == "user_context")
    assert "Table for 4 on the 18th please" in context.text
    assert conv.state.gate_text_delivered


def test_channel_responses_and_payload_stash() -> None:
    config = toy(
        **{
            "slot:num_guests": {
                "response": [{"type": "text", "text": "Party size?"}],
                "channel_responses": {
                    "MOBILE": [{"type": "payload", "data": {"chips": ["2", "4"]}}]
                },
            }
        }
    )
    flow = compile_flow(config)
    result = step(flow, SessionState(), "Hi", channel="MOBILE")
    assert not result.action.preempt and not result.action.response
    assert result.state.pending_payloads == [{"type": "payload", "data": {"chips": ["2", "4"]}}]
    result = step(flow, SessionState(), "Hi", channel="WEB")
    assert result.state.pending_payloads == [{"type": "text", "text": "Party size?"}]


def test_refused_call_to_hidden_tool_is_recorded() -> None:
    conv = Conversation(compile_flow(toy()), {})
    conv.turn("Hi")
    t = conv.turn("7 pm", calls(("set_chosen_time", {"t": "19:00"}), ("check_availability", {})))
    assert [c.outcome for c in t.llm_calls] == ["refused", "refused"]
    assert conv.state.record("chosen_time").status == "empty"


def test_suffix_holds_one_phase_block_and_the_sentinel() -> None:
    conv = readback_toy()
    conv.turn("Hi")
    t = conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    suffix = t.actions[-1].suffix
    assert suffix.startswith("<!-- steward -->")
    assert suffix.count("<readback_protocol>") == 1 and "<slot_filling_protocol>" not in suffix
    assert "<system_directive>\nJust to confirm — 4 guests. Is that correct?\n</system_directive>" in suffix
    first = conv.turn("what?", [Inference()]).actions[0]
    assert "Tool selection" not in first.suffix


def test_protocol_block_lists_hint_to_setter() -> None:
    result = step(compile_flow(BELLA), SessionState(), "Hi")
    assert "- Party size / number of guests → set_reservation_basics" in result.action.suffix
    assert RecordedCall  # the vocabulary is importable for users' scripts


def test_a_declined_optional_slot_meets_requires() -> None:
    config = {
        "slots": [
            {"name": "nickname", "setter": "set_nickname", "required": False},
            {"name": "greeting_style", "setter": "set_style", "requires": ["nickname"], "ask": "Formal or casual?"},
        ]
    }
    conv = Conversation(compile_flow(config), {})
    conv.turn("Hi")
    t = conv.turn("no nickname, thanks", calls(("decline_slot", {"slot": "nickname"})))
    assert t.actions[-1].asks == ("greeting_style",)
    assert "set_style" in t.actions[-1].visible_tools


def test_auto_confirm_needs_a_readback_the_caller_heard() -> None:
    config = toy(
        **{
            "slot:date": {"requires_readback": True},
            "slot:num_guests": {"validation": {"errors": {"too_many": "We seat up to 8."}}},
        }
    )
    tools = {"set_num_guests": lambda n: {"error": True, "error_code": "too_many"}}
    conv = Conversation(compile_flow(config), tools)
    conv.turn("Hi")
    t = conv.turn("12 people on the 18th", calls(("set_num_guests", {"n": 12}), ("set_date", {"d": "2026-07-18"})))
    assert t.said == "We seat up to 8." and conv.state.record("date").status == "pending"
    t = conv.turn("Fine")
    assert not any(c.name == "confirm_pending" for c in t.fired), "the date readback was never spoken"
    assert t.actions[0].phase == "readback" and "confirm_pending" not in t.actions[0].visible_tools


def test_a_setter_that_only_infers_stores_the_inference() -> None:
    flow = compile_flow({"slots": [{"name": "company_size", "setter": "set_company_size"}]})
    from pipecat_steward.core.slots import route_setter

    routed = route_setter(flow, SessionState(), "set_company_size", {"stored": True, "inferred": {"company_size": "10-49"}}, "we're about thirty people")
    assert routed.ok and routed.reply == {"stored": True, "slots": [], "inferred": ["company_size"]}
    record = routed.state.record("company_size")
    assert (record.status, record.value, record.source) == ("inferred", "10-49", "we're about thirty people")


def test_enum_slots_coerce_to_their_values_and_need_them() -> None:
    config = {
        "slots": [
            {
                "name": "timeline",
                "setter": "set_timeline",
                "type": "enum",
                "values": ["now", "this_quarter"],
            },
            {"name": "email", "setter": "set_email"},
        ]
    }
    conv = Conversation(compile_flow(config), {})
    conv.turn("Hi")
    conv.turn("this quarter", calls(("set_timeline", {"t": "THIS_QUARTER"})))
    assert conv.state.record("timeline").value == "this_quarter"
    t = conv.turn("next year", calls(("correct_slot", {"slot": "timeline", "value": "next_year"})))
    assert t.llm_calls[0].outcome == "error" and conv.state.record("timeline").value == "this_quarter"
    with pytest.raises(ConfigError, match=r"slots\[0\].values: an enum slot needs `values`"):
        compile_flow({"slots": [{"name": "t", "setter": "s", "type": "enum"}]})


def test_the_stall_escape_comes_before_a_hard_steer_back() -> None:
    config = toy()
    config["stall_escape_after"] = 3
    config["steer_back"] = {"soft_after": 2, "hard_after": 4, "escalate_after": 9}
    conv = Conversation(compile_flow(config), {})
    for text in ("Hi", "hmm", "what?"):
        conv.turn(text)
    t = conv.turn("no idea")  # the 4th turn: both the hard steer-back and the stall escape are due
    assert any(e.tag == "stall_escape" for e in t.events) and conv.state.status == "escalated"
    assert not any(e.tag == "steer_back_hard" for e in t.events)
    assert t.said.startswith("Let me hand you to a colleague")


def test_a_yes_naming_another_choice_of_an_enum_slot_is_not_confirmed_by_code() -> None:
    config = toy(**{"slot:num_guests": {"requires_readback": True}})
    config["slots"].insert(
        0,
        {
            "name": "mood",
            "source": "user",
            "setter": "set_mood",
            "type": "enum",
            "values": ["good", "great"],
            "requires_readback": True,
            "ask": "How are you?",
        },
    )
    conv = Conversation(compile_flow(config), {"check_availability": check_availability})
    conv.turn("Hi")
    conv.turn("good", calls(("set_mood", {"m": "good"})))
    t = conv.turn("Yes, great")
    assert not any(c.name == "confirm_pending" for c in t.fired)
    assert conv.state.record("mood").status == "pending"
    t = conv.turn("Yes, good")
    assert any(c.name == "confirm_pending" for c in t.fired)


def test_an_announce_due_after_a_confirmation_is_spoken_with_the_next_question() -> None:
    """Whatever path confirms, the announce messages that become due are said in that turn."""
    config = toy(**{"slot:num_guests": {"requires_readback": True}})
    config["slots"].insert(
        1,
        {
            "name": "notice",
            "source": "announce",
            "requires": ["num_guests"],
            "message": "Parties pay a small deposit.",
            "preempt": False,
        },
    )
    conv = Conversation(compile_flow(config), {"check_availability": check_availability}, rng=FirstChoice())
    conv.turn("Hi")
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    t = conv.turn("Yes, that's right, thank you so much")
    assert "Parties pay a small deposit." in t.said and t.said.endswith("What date works for you?")
    assert conv.state.record("notice").status == "filled"
