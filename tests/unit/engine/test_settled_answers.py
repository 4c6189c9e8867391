"""A settled answer changes only on a caller turn that carries content.

The model's ``correct_slot`` on a blank turn, a filler or a bare affirmation is refused with an
informative result and leaves the answer as it was, unless the words name the new value or the
affirmation accepts a value the bot just offered; a correction without a value is an argument
error and never stores the text ``None``. Other words are the model's to read. The rule
sits in the engine's routing, so every path that routes a model call (the cascaded hook,
speech-to-speech, the direct driver, ``steward simulate``) keeps it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.core.slots.content import HESITATION, carries_content, supports_correction
from pipecat_steward.runtime.dispatch import dispatch

from .flows import ANSWERS, SETTLED, settled_answers

FLOW = compile_flow(ANSWERS)

READBACK = "So that's ana@example.com, a table for 4 on 2026-07-17. Is that right?"
# The bot's last words, the caller's words, the model's correction, whether the answer changes.
CASES: list[tuple[str, str, str, Any, bool]] = [
    (READBACK, "that's right", "email", "bob@example.com", False),
    (READBACK, "yes", "party", 6, False),
    (READBACK, "yeah, sounds good", "party", 6, False),
    (READBACK, "", "email", "bob@example.com", False),
    (READBACK, "   ", "party", 6, False),
    (READBACK, "hmm, let me think", "party", 6, False),
    (READBACK, "hold on a second", "day", "2026-07-20", False),
    (READBACK, "not sure", "email", "bob@example.com", False),
    (READBACK, "not sure", "email", "not-an-email", False),
    ("", "um, well", "party", 6, False),
    ("Shall I make it 6 instead?", "yes please", "party", 6, True),
    ("Would 5 pm on the 20th work?", "that works", "day", "2026-07-20", True),
    ("Shall I use bob@example.com?", "that's right", "email", "bob@example.com", True),
    ("Shall I use bob@example.com?", "that's right", "party", 6, False),
    (READBACK, "actually make it six", "party", 6, True),
    (READBACK, "six of us", "party", 6, True),
    (READBACK, "8", "party", 8, True),
    (READBACK, "no, it's bob@example.com", "email", "bob@example.com", True),
    (READBACK, "bob@example.com", "email", "bob@example.com", True),
    (READBACK, "the 20th of July", "day", "2026-07-20", True),
    (READBACK, "sorry, I meant Friday", "day", "2026-07-24", True),
    (READBACK, "yes, 6", "party", 6, True),
]


@pytest.mark.parametrize(("offered", "said", "slot", "value", "changes"), CASES)
def test_a_correction_needs_caller_words_that_change_the_answer(
    offered: str, said: str, slot: str, value: Any, changes: bool
) -> None:
    state = settled_answers(FLOW)
    args = {"slot": slot, "value": value}
    routed = dispatch(
        FLOW, state, {}, "correct_slot", args, user_text=said, check_visible=False, bot_text=offered
    )
    assert routed.ok is changes
    record = routed.state.record(slot)
    if changes:
        assert record.value == value
    else:
        assert (record.status, record.value) == ("filled", SETTLED[slot])
        assert routed.reply["error_code"] == "correction_not_heard"
        assert "not changed" in str(routed.reply["message"])


@pytest.mark.parametrize("said", ["", "actually", "no, it's different"])
def test_a_correction_without_a_value_is_an_argument_error(said: str) -> None:
    state = settled_answers(FLOW)
    args = {"slot": "email"}
    routed = dispatch(FLOW, state, {}, "correct_slot", args, user_text=said, check_visible=False)
    assert not routed.ok
    assert routed.reply["error_code"] == "bad_arguments"
    assert routed.reply["missing"] == ["value"]
    assert routed.state.record("email").value == SETTLED["email"]


QUIET = st.one_of(
    st.sampled_from(["yes", "yep", "correct", "that's right", "sounds good", "ok thanks"]),
    st.text(alphabet=" \t\n", max_size=5),
    st.lists(
        st.sampled_from(["hmm", "um", "well", "let", "me", "think", "hold", "on"]), max_size=4
    ).map(" ".join),
)


VALUES = st.text(alphabet="abcdefgh@.0123456789", min_size=1, max_size=20) | st.integers(10, 99)


@given(said=QUIET, slot=st.sampled_from(sorted(SETTLED)), value=VALUES)
@settings(max_examples=200, deadline=None)
def test_no_quiet_turn_changes_a_settled_answer(said: str, slot: str, value: Any) -> None:
    """A blank turn, a filler or a bare yes to a read-back of other values changes nothing."""
    assert not carries_content(said)
    assert not supports_correction(said, value, READBACK, SETTLED.values())
    state = settled_answers(FLOW)
    args = {"slot": slot, "value": value}
    routed = dispatch(
        FLOW,
        state,
        {},
        "correct_slot",
        args,
        user_text=said,
        check_visible=False,
        bot_text=READBACK,
    )
    assert (routed.state.record(slot).status, routed.state.record(slot).value) == (
        "filled",
        SETTLED[slot],
    )


# A value as written: words of mixed case ("McDonald's", "iPhone", "İA") are said as written.
# A filler ("hm", "uh") names nothing, so a value of fillers alone is not drawn.
WRITTEN = (
    st.lists(
        st.text(st.characters(categories=["Lu", "Ll"]), min_size=2, max_size=9),
        min_size=1,
        max_size=3,
    )
    .filter(lambda words: any(w.lower() not in HESITATION for w in words))
    .map(" ".join)
)


@given(value=WRITTEN, lead=st.sampled_from(["Shall I make it", "So that is", "You want"]))
@settings(max_examples=300, deadline=None)
def test_a_yes_accepts_a_value_the_bot_named_as_written(value: str, lead: str) -> None:
    """A bare yes to "Shall I make it McDonald's?" accepts McDonald's, however it is cased."""
    assert supports_correction("yes", value, f"{lead} {value}?")


@pytest.mark.parametrize(
    "value", ["McDonald's", "MacKenzie", "iPhone", "LeBron", "DeShawn", "İA", "İZMİR"]
)
def test_a_yes_accepts_a_camel_cased_name_the_bot_offered(value: str) -> None:
    assert supports_correction("yes", value, f"Shall I make it {value}?")
    assert not supports_correction("yes", value, "Shall I make it Smith?")


@pytest.mark.parametrize(
    ("offered", "value"),
    [
        ("Shall I make it 17:00?", "17:00"),
        ("Shall I make it 5 pm?", "17:00"),
        ("Say 09:30?", "09:30"),
    ],
)
def test_a_yes_accepts_a_time_the_bot_offered_on_either_clock(offered: str, value: str) -> None:
    assert supports_correction("yes", value, offered)
    assert not supports_correction("yes", value, "Shall I make it 8 pm?")


@pytest.mark.parametrize(
    ("offered", "value", "other"),
    [
        ("Your zip is nine four one one zero, right?", "94110", "94115"),
        ("So that's double four one two?", "4412", "4421"),
        ("The code is 9 4 1 1 0?", "94110", "94111"),
        ("Room oh two one?", "021", "012"),
    ],
)
def test_a_yes_accepts_a_number_the_bot_read_out_digit_by_digit(
    offered: str, value: str, other: str
) -> None:
    """A voice bot reads codes out digit by digit; a bare yes accepts what it read."""
    assert supports_correction("yes", value, offered)
    assert not supports_correction("yes", other, offered)


def test_a_run_of_thousands_of_digits_is_read_without_error() -> None:
    """Python reads no int from over 4,300 digits; the words of a turn are read as text."""
    digits = "1" * 5000
    assert supports_correction(digits, "x")
    assert supports_correction("yes", digits, f"Shall I make it {digits}?")
    assert not supports_correction("yes", "2" * 5000, f"Shall I make it {digits}?")
