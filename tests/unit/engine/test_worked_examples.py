"""The reservation worked examples (happy path, retries, inline correction, deferred readback)
and the lead form's four turns, each played through the engine turn by turn."""

from __future__ import annotations

from typing import Any

from pipecat_steward.core.slots import compile_flow, propose
from pipecat_steward.core.state import SlotRecord
from pipecat_steward.runtime.conversation import Conversation, Inference, RecordedCall

from .flows import BELLA, LEAD, toy


def check_availability(num_guests: int, date: str) -> dict[str, Any]:
    return {"open_slots": "6 PM, 7:30 PM, 9 PM", "success": True}


def make_reservation(**_: Any) -> dict[str, Any]:
    return {"confirmation": "RES-4821", "success": True}


def calls(*items: tuple[str, dict[str, Any]]) -> list[Inference]:
    return [Inference(calls=[RecordedCall(n, a) for n, a in items])]


def happy() -> Conversation:
    tools = {
        "check_availability": check_availability,
        "make_reservation": make_reservation,
        "escalate": lambda: {"ok": True},
    }
    return Conversation(compile_flow(toy()), tools)


def test_section_13_happy_path() -> None:
    conv = happy()
    t1 = conv.turn("Hi")
    assert t1.actions[0].directive == "How many guests?"
    assert not t1.actions[0].preempt, "first turn: the LLM greets"
    assert {"set_num_guests", "set_date", "set_name"} <= t1.actions[0].visible_tools
    assert (
        not {"set_chosen_time", "confirm_pending", "reject_pending", "check_availability"}
        & t1.actions[0].visible_tools
    )

    t2 = conv.turn(
        "4 people for next Friday",
        calls(("set_num_guests", {"count": 4}), ("set_date", {"date": "2026-07-18"})),
    )
    assert [c.outcome for c in t2.llm_calls] == ["ok", "ok"]
    assert [(c.name, dict(c.args)) for c in t2.fired] == [
        ("check_availability", {"num_guests": 4, "date": "2026-07-18"})
    ]
    assert t2.said == "We have 6 PM, 7:30 PM, 9 PM. Which time works?"
    assert t2.bot[-1].source == "preempt"

    t3 = conv.turn("7:30", calls(("set_chosen_time", {"time": "19:30"})))
    final = t3.actions[-1]
    assert final.directive == "What name for the reservation?" and not final.preempt
    assert "set_name" in final.visible_tools
    assert not {"set_num_guests", "set_date", "set_chosen_time"} & final.visible_tools

    t4 = conv.turn("Sarah Chen", calls(("set_name", {"name": "Sarah Chen"})))
    assert t4.fired[0].args == {
        "num_guests": 4,
        "date": "2026-07-18",
        "chosen_time": "19:30",
        "name": "Sarah Chen",
    }
    assert t4.said == "Confirmed! Number: RES-4821."
    assert conv.state.status == "complete"

    before = conv.state.to_json()
    t5 = conv.turn("Is there parking?")
    assert t5.actions[0].phase == "terminal" and not t5.actions[0].visible_tools
    assert conv.state.to_json() == before, "terminal state guard: nothing changes"


def failing_availability(**_: Any) -> dict[str, Any]:
    return {"success": False, "reason": "fully booked"}


def test_section_14_max_retries_1_exhausts_on_first_failure() -> None:
    escalations: list[dict[str, Any]] = []
    tools = {
        "check_availability": failing_availability,
        "escalate": lambda: escalations.append({}) or {"ok": True},
    }
    conv = Conversation(compile_flow(toy()), tools)
    conv.turn("Hi")
    t2 = conv.turn(
        "4 people Friday", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"}))
    )
    # retries 0 → 1; max_retries 1; 1 >= 1 → exhausted.
    assert conv.state.retries["CheckAvailability"] == 1
    assert conv.state.status == "escalated"
    assert t2.said == "Please call us at 555-0100."
    assert [c.name for c in t2.fired] == ["check_availability", "escalate"]
    assert escalations == [{}]


def test_section_14_max_retries_2_recollects_then_succeeds() -> None:
    results = iter(
        [{"success": False, "reason": "fully booked"}, {"open_slots": "8 PM", "success": True}]
    )
    tools = {"check_availability": lambda **_: next(results)}
    config = toy(**{"task:CheckAvailability.on_failure": {"max_retries": 2}})
    conv = Conversation(compile_flow(config), tools)
    conv.turn("Hi")
    t2 = conv.turn(
        "4 people Friday", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"}))
    )
    assert conv.state.retries["CheckAvailability"] == 1, "1 >= 2 is false: not exhausted"
    assert conv.state.record("date").status == "empty", "clear_slots removed the date"
    assert conv.state.record("num_guests").value == 4
    assert t2.said == "No availability for that date. Try another?"
    assert "set_date" in conv.turn("hmm", []).actions[0].visible_tools

    t3 = conv.turn("How about Saturday?", calls(("set_date", {"d": "2026-07-19"})))
    assert t3.fired[0].args == {"num_guests": 4, "date": "2026-07-19"}
    assert "CheckAvailability" not in conv.state.retries, "success clears the task's retries"
    assert t3.said == "We have 8 PM. Which time works?"


def readback_conv() -> Conversation:
    config = toy(**{"slot:num_guests": {"requires_readback": True}})
    return Conversation(
        compile_flow(config), {"check_availability": check_availability}, rng=FirstChoice()
    )


class FirstChoice:
    """A deterministic random source: always the first option."""

    def choice(self, seq: list[Any]) -> Any:
        return seq[0]


def test_section_15_inline_correction_during_readback() -> None:
    conv = readback_conv()
    conv.turn("Hi")
    t2 = conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    readback = t2.actions[-1]
    assert conv.state.record("num_guests").status == "pending"
    assert (
        readback.phase == "readback"
        and readback.directive == "Just to confirm — 4 guests. Is that correct?"
    )
    # Fresh pending values: the readback must be heard before it can be confirmed.
    assert not {"confirm_pending", "reject_pending", "set_num_guests"} & readback.visible_tools

    t3 = conv.turn("Actually, make it 6", calls(("set_num_guests", {"n": 6})))
    first = t3.actions[0]
    assert {"confirm_pending", "reject_pending", "set_num_guests"} <= first.visible_tools
    assert not {"set_date", "set_chosen_time"} & first.visible_tools - {"set_date"}
    assert conv.state.record("num_guests").value == 6
    assert t3.actions[-1].directive == "Just to confirm — 6 guests. Is that correct?"

    t4 = conv.turn("Yes")
    assert t4.fired[0].name == "confirm_pending", "a pure affirmative is confirmed without the LLM"
    assert not t4.llm_calls
    assert conv.state.record("num_guests").status == "filled"
    assert t4.said == "Wonderful! What date works for you?"


def test_section_15_confirm_by_llm_tool_call() -> None:
    conv = readback_conv()
    conv.turn("Hi")
    conv.turn("4 people", calls(("set_num_guests", {"n": 4})))
    t3 = conv.turn("You got it, four is right", calls(("confirm_pending", {})))
    assert t3.llm_calls[0].outcome == "ok"
    assert t3.said == "Wonderful! What date works for you?"


def book(**_: Any) -> dict[str, Any]:
    return {"confirmation": "BN-1234", "success": True}


def test_section_7a7_deferred_grouped_readback() -> None:
    tools = {
        "find_available_times": lambda **_: {"available_times": "18:00, 20:30", "success": True},
        "book_reservation": book,
    }
    conv = Conversation(compile_flow(BELLA), tools)
    conv.turn("Hi")
    conv.turn(
        "4 people on June 17",
        calls(("set_reservation_basics", {"party_size": 4, "preferred_date": "2026-06-17"})),
    )
    assert conv.state.with_status("pending") == {"party_size": 4, "preferred_date": "2026-06-17"}
    t3 = conv.turn("yes")
    assert t3.said == "We have 18:00, 20:30. Which time works?"
    conv.turn("8:30", calls(("set_selected_time", {"value": "20:30"})))
    conv.turn("yes")
    assert conv.state.record("selected_time").status == "filled"

    t5 = conv.turn("Chen", calls(("set_guest_info", {"guest_name": "Chen"})))
    assert conv.state.with_status("deferred") == {"guest_name": "Chen"}
    assert not conv.state.with_status("pending")
    last = t5.actions[-1]
    assert [h.tag for h in last.hints] == ["deferred_collection"]
    assert "proceed to ask: Do you have any special requests" in last.hints[0].text
    assert "confirm_pending" not in last.visible_tools

    t6 = conv.turn("No", calls(("set_guest_info", {"special_requests": "None"})))
    assert conv.state.with_status("pending") == {"guest_name": "Chen", "special_requests": "None"}
    scope = next(h for h in t6.actions[-1].hints if h.tag == "readback_scope")
    assert "guest_name: under the name Chen" in scope.text
    assert "special_requests: no special requests" in scope.text
    assert "confirm_pending" not in t6.actions[-1].visible_tools, "fresh pending after promotion"

    t7 = conv.turn("Yes")
    assert t7.fired[0].name == "confirm_pending"
    assert t7.fired[1].name == "book_reservation"
    assert t7.said == "Your reservation is confirmed! Number: BN-1234."
    assert conv.state.status == "complete"


def proposal(status: str, value: Any, source: str | None) -> SlotRecord:
    return SlotRecord(status, value, source, "extraction")  # type: ignore[arg-type]


def test_seed_003_four_turns() -> None:
    flow = compile_flow(LEAD)
    conv = Conversation(flow)

    def extract(**props: SlotRecord) -> None:
        conv.state = propose(flow, conv.state, props.items()).state

    extract(
        name=proposal("filled", "Sanne", "I'm Sanne."),
        company_size=proposal("inferred", "10-49", "we're a 30-person agency"),
        current_tool=proposal("filled", "Trello", "currently on Trello"),
    )
    t1 = conv.turn(
        "Hi - we're a 30-person agency in Rotterdam, currently on Trello, and honestly it's falling apart. I'm Sanne."
    )
    state = conv.state
    assert (state.record("name").status, state.record("name").value) == ("filled", "Sanne")
    assert (state.record("company_size").status, state.record("company_size").source) == (
        "inferred",
        "we're a 30-person agency",
    )
    assert state.record("current_tool").status == "filled"
    assert state.record("timeline").status == "empty" and state.record("email").status == "empty"
    hint = next(h for h in t1.actions[-1].hints if h.tag == "confirm_inferred")
    assert (
        "company_size: 10-49" in hint.text
        and "name" not in hint.text.split(":", 1)[1].split("\n")[1]
    )
    assert t1.actions[-1].asks == ("timeline", "budget_band"), "two slots the config groups"
    assert not t1.actions[-1].preempt

    extract(timeline=proposal("filled", "this_quarter", "This quarter ideally"))
    t2 = conv.turn("This quarter ideally. Does your import handle Trello attachments?")
    assert not t2.actions[0].preempt, "their question is answered by the LLM first"
    assert t2.actions[-1].asks == ("email",), "required slots come before the optional budget"

    extract(
        email=proposal("filled", "sanne@example.com", "sanne@example.com"),
        budget_band=proposal("declined", None, "I'd rather not get into budget"),
    )
    conv.turn("sanne@example.com. I'd rather not get into budget at this stage.")
    assert conv.state.record("email").status == "filled"
    assert conv.state.record("budget_band").status == "declined"
    # Turn 4: every required slot is filled; company_size is inferred WITH a source.
    assert conv.state.status == "complete"
    assert conv.state.record("company_size").status == "inferred"
    t4 = conv.turn("Thanks!")
    assert t4.actions[0].phase == "terminal"
