"""The rule both engines end a turn with: answer the caller's question first."""

from __future__ import annotations

import pytest
from tests.unit.engine.flows import TOY

from pipecat_steward.core.slots import Action, compile_flow, step
from pipecat_steward.core.slots.answer_first import (
    QUESTION_HINT,
    answer_question_first,
    is_question,
)
from pipecat_steward.core.state import SessionState, SlotError

FLOW = compile_flow(TOY)


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Can I bring a dog?", True),
        ("what time do you open", True),
        ("Four people. Is parking free", True),
        ("I have 40 people", False),
        ("Yes.", False),
        ("", False),
    ],
)
def test_a_question_is_a_question_mark_or_an_opening_question_word(text: str, asks: bool) -> None:
    assert is_question(text) is asks


PLAIN = Action(phase="collection", status="in_progress", preempt=True, message="How many?")


@pytest.mark.parametrize(
    ("action", "turned"),
    [
        (PLAIN, True),
        (Action(phase="collection", status="in_progress", preempt=True, force_preempt=True), False),
        (Action(phase="terminal", status="escalated", preempt=True), False),
        (Action(phase="collection", status="in_progress"), False),
    ],
)
def test_only_a_plain_preempt_gives_way_to_a_question(action: Action, turned: bool) -> None:
    out = answer_question_first(action, "Can I bring a dog?")
    assert (out.preempt is False and QUESTION_HINT in out.hints) is turned
    assert answer_question_first(action, "I have 40 people") == action


def _erred() -> SessionState:
    state = SessionState()
    state.slot_errors.append(SlotError("num_guests", "too_many"))
    return state


def test_the_slot_engine_ends_its_turn_with_the_rule() -> None:
    assert step(FLOW, _erred(), "I have 40 people").action.preempt
    asked = step(FLOW, _erred(), "Can I bring a dog?").action
    assert not asked.preempt and QUESTION_HINT in asked.hints


def test_a_re_invocation_reads_the_words_of_its_turn() -> None:
    asked = step(FLOW, _erred(), "", caller_words="Can I bring a dog?").action
    assert not asked.preempt and QUESTION_HINT in asked.hints
