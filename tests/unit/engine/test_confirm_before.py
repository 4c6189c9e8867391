"""``confirm_before``: a terminal or irreversible task is confirmed as a whole before it fires;
gated tasks fire alone; optional inputs are asked once first; validation names the fix."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.conversation import Conversation

from .flows import toy
from .test_worked_examples import calls, check_availability

NOTES = {
    "name": "notes",
    "source": "user",
    "setter": "set_notes",
    "required": False,
    "ask": "Any notes for the kitchen?",
}
BOOKED: list[dict[str, Any]] = []


def make_reservation(**args: Any) -> dict[str, Any]:
    BOOKED.append(args)
    return {"confirmation": "RES-4821", "success": True}


def conv(**task: Any) -> Conversation:
    config = toy(**{"task:MakeReservation": {"confirm_before": True, **task}})
    config["slots"].insert(5, NOTES)
    config["tasks"][1]["inputs"].append("notes")
    tools = {"check_availability": check_availability, "make_reservation": make_reservation}
    BOOKED.clear()
    return Conversation(compile_flow(config), tools)


def up_to_the_name(c: Conversation) -> None:
    c.turn("Hi")
    c.turn("4 on July 18th", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"})))
    c.turn("7:30", calls(("set_chosen_time", {"t": "19:30"})))


def test_the_whole_task_is_read_back_once_and_a_plain_yes_fires_it() -> None:
    c = conv()
    up_to_the_name(c)
    t = c.turn("Chen", calls(("set_name", {"n": "Chen"})))
    assert t.said.endswith("Any notes for the kitchen?"), "optional input asked once first"
    t = c.turn("Nothing else")
    assert not BOOKED
    assert t.said == "Before I go ahead: 4 guests, July 18th, 19:30, Chen. Shall I go ahead?"
    assert t.actions[-1].phase == "readback"
    t = c.turn("Yes, that's right, thank you so much")
    assert [f.name for f in t.fired] == ["confirm_pending", "make_reservation"]
    assert BOOKED == [
        {
            "num_guests": 4,
            "date": "2026-07-18",
            "chosen_time": "19:30",
            "name": "Chen",
            "notes": None,
        }
    ]
    assert c.state.status == "complete"


@pytest.mark.parametrize(
    "reply", ["Yes, for 6", "yes, the 19th", "Sure, Chan", "Yes but wait", "ok?"]
)
def test_a_reply_with_content_never_fires_the_task(reply: str) -> None:
    c = conv(**{"confirm_before": {"ask_optional": False}})
    up_to_the_name(c)
    c.turn("Chen", calls(("set_name", {"n": "Chen"})))
    t = c.turn(reply)
    assert not BOOKED and not t.fired
    assert c.state.summary_task == "MakeReservation"


def test_a_correction_goes_through_the_slot_rules_and_is_summarised_again() -> None:
    c = conv(**{"confirm_before": {"ask_optional": False}})
    up_to_the_name(c)
    c.turn("Chen", calls(("set_name", {"n": "Chen"})))
    t = c.turn("Make it 6 people", calls(("set_num_guests", {"n": 6})))
    assert not BOOKED
    # The availability depended on the party size: it is looked up again, then the time asked.
    assert "check_availability" in [f.name for f in t.fired]
    assert c.state.record("chosen_time").status == "empty"
    last = c.turn("7:30", calls(("set_chosen_time", {"t": "19:30"})))
    assert "Before I go ahead: 6 guests" in last.said
    t2 = c.turn("Yes")
    assert BOOKED and BOOKED[0]["num_guests"] == 6
    assert [f.name for f in t2.fired] == ["confirm_pending", "make_reservation"]


def test_a_rejection_asks_again_through_the_slot_rules() -> None:
    c = conv(**{"confirm_before": {"ask_optional": False}})
    up_to_the_name(c)
    c.turn("Chen", calls(("set_name", {"n": "Chen"})))
    c.turn("No, that's all wrong", calls(("reject_pending", {})))
    assert not BOOKED and c.state.summary_task == ""
    assert c.state.record("name").status == "empty"


def test_a_gated_task_fires_alone() -> None:
    config = toy(**{"task:MakeReservation": {"inputs": ["num_guests", "date"]}})
    tools = {"check_availability": check_availability, "make_reservation": make_reservation}
    BOOKED.clear()
    c = Conversation(compile_flow(config), tools)
    c.turn("Hi")
    t = c.turn(
        "4 on July 18th", calls(("set_num_guests", {"n": 4}), ("set_date", {"d": "2026-07-18"}))
    )
    fires = [[call.name for call in a.calls] for a in t.actions if a.calls]
    assert fires == [["check_availability"], ["make_reservation"]]


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (
            {"terminal": False, "confirm_before": True},
            "mark the task `terminal: true` or `irreversible: true`",
        ),
        ({"confirm_before": {"say": "Go ahead with {nope}?"}}, "unknown slot 'nope'"),
    ],
)
def test_validation_names_the_fix(task: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="confirm_before") as info:
        compile_flow(toy(**{"task:MakeReservation": task}))
    assert message in str(info.value)


def test_irreversible_tasks_may_have_a_confirm_before() -> None:
    flow = compile_flow(
        toy(
            **{
                "task:MakeReservation": {
                    "terminal": False,
                    "irreversible": True,
                    "confirm_before": True,
                }
            }
        )
    )
    assert flow.task["MakeReservation"].config.irreversible


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["6", "six", "the 19th", "Friday", "PED-1003", "Chan", "but", "actually", "?"])
)
def test_no_reply_that_carries_content_fires_the_task(content: str) -> None:
    c = conv(**{"confirm_before": {"ask_optional": False}})
    up_to_the_name(c)
    c.turn("Chen", calls(("set_name", {"n": "Chen"})))
    c.turn(f"Yes {content}")
    assert not BOOKED
