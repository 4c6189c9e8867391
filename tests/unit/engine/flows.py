"""Configs of the seeds' worked examples and other flows, shared by the engine tests."""

from __future__ import annotations

import copy
from typing import Any

from pipecat_steward.core.slots import CompiledFlow, step
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.dispatch import dispatch

TOY: dict[str, Any] = {
    "slots": [
        {
            "name": "num_guests",
            "source": "user",
            "setter": "set_num_guests",
            "ask": "How many guests?",
            "readback_fmt": {"type": "plural", "one": "guest", "other": "guests"},
        },
        {
            "name": "date",
            "source": "user",
            "setter": "set_date",
            "ask": "What date works for you?",
            "readback_fmt": "date",
        },
        {"name": "open_slots", "source": "task:CheckAvailability"},
        {
            "name": "chosen_time",
            "source": "user",
            "setter": "set_chosen_time",
            "requires": ["open_slots"],
            "ask": "We have {open_slots}. Which time?",
        },
        {
            "name": "name",
            "source": "user",
            "setter": "set_name",
            "ask": "What name for the reservation?",
        },
        {"name": "confirmation", "source": "task:MakeReservation"},
    ],
    "tasks": [
        {
            "name": "CheckAvailability",
            "tool": "check_availability",
            "inputs": ["num_guests", "date"],
            "outputs": {"open_slots": "open_slots"},
            "success_check": "success",
            "then_say": "We have {open_slots}. Which time works?",
            "on_failure": {
                "retry_say": "No availability for that date. Try another?",
                "max_retries": 1,
                "clear_slots": ["date"],
                "on_exhaust": {"say": "Please call us at 555-0100.", "then": "escalate"},
            },
        },
        {
            "name": "MakeReservation",
            "tool": "make_reservation",
            "inputs": ["num_guests", "date", "chosen_time", "name"],
            "outputs": {"confirmation": "confirmation"},
            "success_check": "success",
            "terminal": True,
            "then_say": "Confirmed! Number: {confirmation}.",
            "on_failure": {
                "retry_say": "Let me try once more.",
                "max_retries": 2,
                "on_exhaust": {"say": "Please call us directly.", "then": "escalate"},
            },
        },
    ],
}


def toy(**changes: Any) -> dict[str, Any]:
    """A deep copy of the toy config with slot or task fields changed: ``{"slot:num_guests":
    {"requires_readback": True}}`` or ``{"task:CheckAvailability.on_failure": {...}}``."""
    config = copy.deepcopy(TOY)
    for key, value in changes.items():
        kind, _, rest = key.partition(":")
        name, _, attr = rest.partition(".")
        items = config["slots" if kind == "slot" else "tasks"]
        target = next(i for i in items if i["name"] == name)
        if attr:
            target[attr].update(value)
        else:
            target.update(value)
    return config


BELLA: dict[str, Any] = {
    "slots": [
        {
            "name": "party_size",
            "source": ["event", "user"],
            "setter": "set_reservation_basics",
            "setter_field": "party_size",
            "requires_readback": True,
            "hint": "Party size / number of guests",
            "ask": "How many guests will be dining?",
            "readback_fmt": {"type": "plural", "one": "guest", "other": "guests"},
        },
        {
            "name": "preferred_date",
            "source": "user",
            "setter": "set_reservation_basics",
            "setter_field": "preferred_date",
            "requires_readback": True,
            "hint": "Preferred date",
            "ask": "What date would you like?",
            "readback_fmt": "date",
        },
        {"name": "available_times", "source": "task:FindAvailableTimes"},
        {
            "name": "selected_time",
            "source": "user",
            "setter": "set_selected_time",
            "requires": ["available_times"],
            "requires_readback": True,
            "readback_fmt": "time",
            "ask": "We have {available_times}. Which time works?",
            "validate_against": {
                "response_field": "value",
                "filled_slot": "available_times",
                "error_code": "not_available",
            },
            "validation": {
                "errors": {"not_available": "That time isn't open. We have {available_times}."}
            },
        },
        {
            "name": "guest_name",
            "source": "user",
            "setter": "set_guest_info",
            "setter_field": "guest_name",
            "requires_readback": True,
            "readback_fmt": {"type": "prefix", "text": "under the name "},
            "ask": "What name should the reservation be under?",
        },
        {
            "name": "special_requests",
            "source": "user",
            "setter": "set_guest_info",
            "setter_field": "special_requests",
            "requires_readback": True,
            "readback_fmt": {"type": "none_sub", "text": "no special requests"},
            "ask": "Do you have any special requests or dietary needs?",
        },
        {"name": "confirmation", "source": "task:BookReservation"},
    ],
    "tasks": [
        {
            "name": "FindAvailableTimes",
            "tool": "find_available_times",
            "inputs": ["party_size", "preferred_date"],
            "outputs": {"available_times": "available_times"},
            "then_say": "We have {available_times}. Which time works?",
        },
        {
            "name": "BookReservation",
            "tool": "book_reservation",
            "readback_inputs": True,
            "terminal": True,
            "inputs": [
                "party_size",
                "preferred_date",
                "selected_time",
                "guest_name",
                "special_requests",
            ],
            "outputs": {"confirmation": "confirmation"},
            "then_say": "Your reservation is confirmed! Number: {confirmation}.",
        },
    ],
}

LEAD: dict[str, Any] = {
    "slots": [
        {"name": "name", "setter": "set_name", "ask": "Who am I speaking with?"},
        {
            "name": "company_size",
            "setter": "set_company_size",
            "ask": "Roughly how many people are you?",
        },
        {"name": "current_tool", "setter": "set_current_tool", "ask": "What are you using today?"},
        {"name": "timeline", "setter": "set_timeline", "ask": "When are you hoping to move?"},
        {
            "name": "budget_band",
            "setter": "set_budget_band",
            "required": False,
            "ask": "Do you have a budget in mind?",
        },
        {"name": "email", "setter": "set_email", "ask": "What's the best email to reach you?"},
    ],
    "ask_together": [["timeline", "budget_band"]],
    "stall_escape_after": 3,
}


ANSWERS: dict[str, Any] = {
    "slots": [
        {"name": "email", "setter": "set_email", "ask": "Email?"},
        {"name": "party", "setter": "set_party", "ask": "How many?", "type": "integer"},
        {"name": "day", "setter": "set_day", "ask": "Which day?", "type": "date"},
    ]
}
"""Three answers of three types, for the tests of settled answers and their corrections."""

SETTLED: dict[str, Any] = {"email": "ana@example.com", "party": 4, "day": "2026-07-17"}
"""The values ``settled_answers`` settles."""


def settled_answers(flow: CompiledFlow) -> SessionState:
    """A state of ``flow`` (compiled from ``ANSWERS``) with every answer of ``SETTLED`` confirmed."""
    state = step(flow, SessionState(), "hi").state
    for name, value in SETTLED.items():
        state = dispatch(flow, state, {}, f"set_{name}", {"v": value}, check_visible=False).state
    state = dispatch(flow, state, {}, "confirm_pending", {}, check_visible=False).state
    assert all(state.record(n).status == "filled" for n in SETTLED), state.slots
    return state
