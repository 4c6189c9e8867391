"""A caller who evades the same question twice has declined it; side questions and answers are
never taken for deflections."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow, step
from pipecat_steward.core.slots.deflect import is_deflection
from pipecat_steward.core.state import SessionState

DEFLECTIONS = [
    "I'd rather not say",
    "I would rather not",
    "I'd prefer not to say",
    "prefer not to",
    "I don't want to say",
    "I don't want to give that out",
    "I do not wish to share that",
    "I won't tell you that",
    "I can't say",
    "not telling",
    "none of your business",
    "that's private",
    "It's personal.",
    "no comment",
    "skip it",
    "let's skip that",
    "just skip",
    "pass on that",
    "next question please",
    "let's move on",
    "Why do you need that?",
    "why do you want to know?",
    "Does it matter?",
    "I don't know",
    "dunno",
    "No idea.",
    "not sure",
    "Never mind that",
    "I’d rather not say",
    "Hmm, I don't know, honestly",
]
NOT_DEFLECTIONS = [
    "Chen",
    "Four of us",
    "6",
    "July 17th",
    "No, nothing special",
    "no",
    "yes",
    "sure",
    "Do you have parking?",
    "What's your favourite opera?",
    "I love Tosca",
    "Mm",
    "I don't know, maybe 4",
    "not sure, two or three",
    "I'd rather come at 7",
    "Can we skip the wine list?",
    "I'm not sure about the date but we are four",
    "Tell me about the menu",
]


@pytest.mark.parametrize("text", DEFLECTIONS)
def test_deflections_are_recognised(text: str) -> None:
    assert is_deflection(text)


@pytest.mark.parametrize("text", NOT_DEFLECTIONS)
def test_answers_and_side_questions_are_not_deflections(text: str) -> None:
    assert not is_deflection(text)


@given(st.sampled_from(DEFLECTIONS), st.integers(0, 999) | st.sampled_from(["four", "a dozen"]))
def test_a_deflection_with_a_number_is_an_answer(text: str, number: Any) -> None:
    assert not is_deflection(f"{text}, {number}")


FLOW = compile_flow(
    {
        "slots": [
            {"name": "name", "setter": "set_name", "ask": "Your name?"},
            {"name": "budget", "setter": "set_budget", "ask": "Your budget?"},
            {"name": "email", "setter": "set_email", "ask": "Your email?"},
        ],
        "steer_back": {"soft_after": 2, "hard_after": 3, "escalate_after": 6},
    }
)


def _to_budget() -> SessionState:
    from pipecat_steward.runtime.dispatch import dispatch

    state = step(FLOW, SessionState(), "hi").state
    state = dispatch(FLOW, state, {}, "set_name", {"v": "Ann"}).state
    state = step(FLOW, state, "").state
    assert state.last_asks == ["budget"]
    return state


def test_a_question_evaded_twice_is_declined_and_never_asked_again() -> None:
    state = _to_budget()
    first = step(FLOW, state, "I'd rather not say")
    assert first.state.record("budget").status == "empty"
    second = step(FLOW, first.state, "Like I said, I'd rather not say")
    assert second.state.record("budget").status == "declined"
    assert second.action.asks == ("email",)
    assert "declined_by_deflection" in [e.tag for e in second.action.events]


def test_side_questions_between_do_not_count() -> None:
    state = _to_budget()
    for text in ["Do you have a free plan?", "What about nonprofits?", "I'd rather not say"]:
        state = step(FLOW, state, text).state
    assert state.record("budget").status == "empty"


def test_a_required_slot_evaded_twice_is_declined_too() -> None:
    state = step(FLOW, SessionState(), "hi").state
    for text in ["Why do you need that?", "I don't want to say"]:
        state = step(FLOW, state, text).state
    assert state.record("name").status == "declined"
