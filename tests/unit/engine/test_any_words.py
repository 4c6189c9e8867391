"""Any words: every part of the engine that reads what was said takes any text without raising.

The caller's words come from speech-to-text in whatever script and symbols it transcribes
(superscript and circled digits, digits of other scripts, full-width forms, emoji, control
characters), and the bot's words from a model. A reader that raises on one of them would stop
the call, so each reader, and the engine's turn over them, is run on arbitrary text here.
Digits of any script are numbers ("٣" names 3, as "3" does); a character that only looks like
a digit ("²", "①") is a word like any other.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.extraction.context import build_context
from pipecat_steward.core.extraction.merge import merge_extraction
from pipecat_steward.core.heard_secrets import secrets_in_capture, shaped_secrets, spoken_secrets
from pipecat_steward.core.monitor.policy import claims_completion, promises_action
from pipecat_steward.core.monitor.policy import is_question as bot_asks
from pipecat_steward.core.procedures.steps import normalize
from pipecat_steward.core.slots import compile_flow, step
from pipecat_steward.core.slots.affirm import is_affirmation
from pipecat_steward.core.slots.answer_first import is_question
from pipecat_steward.core.slots.content import carries_content, supports_correction
from pipecat_steward.core.slots.deflect import is_deflection
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.runtime.dispatch import dispatch

from .flows import ANSWERS, SETTLED, settled_answers

ODD = ["²", "①", "٣", "３", "½", "Ⅻ", "𝟘", "\x00", "\u200b", "🎉", "İ", "ß", "ﬁ", "-", "’"]
"""Characters a transcript may hold that ASCII-minded code trips on."""

WORDS = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(ODD) | st.text(max_size=4) | st.sampled_from(["4", "six"])).map(
        " ".join
    ),
)
VALUES = st.one_of(
    st.text(max_size=20),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(st.text(max_size=5), max_size=3),
)

FLOW = compile_flow(ANSWERS)
SPECS = [
    VariableSpec(name="email", description="email", extraction=True),
    VariableSpec(name="party", type="integer", description="party size", extraction=True),
    VariableSpec(name="day", type="date", description="day", extraction=True),
    VariableSpec(name="budget", type="number", description="budget", extraction=True),
    VariableSpec(name="vip", type="boolean", description="vip", extraction=True),
    VariableSpec(name="at", type="time", description="time", extraction=True),
    VariableSpec(name="seat", type="enum", values=("aisle", "window"), description="seat"),
    VariableSpec(name="dishes", type="list", description="dishes", extraction=True),
]
"""Every variable type; the first three are the flow's slots, the others plain variables."""


@given(said=WORDS, value=VALUES, offered=WORDS)
@settings(max_examples=400, deadline=None)
def test_every_reader_of_words_takes_any_text(said: str, value: Any, offered: str) -> None:
    assert isinstance(carries_content(said), bool)
    assert isinstance(supports_correction(said, value, offered, [value, 4]), bool)
    assert isinstance(is_affirmation(said, [value], [offered]), bool)
    for reader in (is_deflection, is_question, claims_completion, bot_asks, promises_action):
        assert isinstance(reader(said), bool)
    assert isinstance(normalize(said), str)
    for found in (spoken_secrets(said), secrets_in_capture(said), shaped_secrets(said, 4)):
        assert all(isinstance(secret, str) for secret in found)


@given(
    said=WORDS,
    earlier=WORDS,
    raw=st.dictionaries(st.sampled_from([s.name for s in SPECS]), VALUES | WORDS),
)
@settings(max_examples=200, deadline=None)
def test_an_extraction_merges_over_any_words(said: str, earlier: str, raw: dict[str, Any]) -> None:
    merged = merge_extraction(
        SPECS, FLOW, settled_answers(FLOW), raw, build_context([earlier, said])
    )
    assert set(merged.written) <= {spec.name for spec in SPECS}


@given(said=WORDS, slot=st.sampled_from(sorted(SETTLED)), value=VALUES, offered=WORDS)
@settings(max_examples=300, deadline=None)
def test_a_turn_and_a_correction_take_any_words(
    said: str, slot: str, value: Any, offered: str
) -> None:
    state = step(FLOW, settled_answers(FLOW), said).state
    args = {"slot": slot, "value": value}
    routed = dispatch(
        FLOW, state, {}, "correct_slot", args, user_text=said, check_visible=False, bot_text=offered
    )
    record = routed.state.record(slot)
    # Refused, the answer stands; taken, it is the value the words supported (as coerced).
    assert routed.ok or (record.status, record.value) == ("filled", SETTLED[slot])


@pytest.mark.parametrize(
    ("offer", "value", "accepted"),
    [
        ("٣", 3, True),  # Arabic-Indic three
        ("３", 3, True),  # full-width three
        ("𝟘𝟠", 8, True),  # mathematical double-struck "08"
        ("3", 3, True),
        ("²", 2, False),  # a superscript two is no number
        ("①", 1, False),
        ("½", 2, False),
    ],
)
def test_digits_of_any_script_are_numbers_and_lookalikes_are_not(
    offer: str, value: int, accepted: bool
) -> None:
    # A bare yes accepts a value the bot's last words offered, and no other.
    offered = f"Shall I make it {offer} instead?"
    assert supports_correction("yes", value, offered, [4]) is accepted
