"""Digits are read however a number was said: digit by digit, repeated, in pairs, as a number.

Callers read numbers out as "four four one two", "double four one two", "forty four twelve"
or "four thousand four hundred twelve", and a speech-to-text service writes what it heard.
Redaction must find such a secret, and name it whole when a caller names a credential: a PIN
said "double four one two" must not leave "four one two" in clear, nor make the word "double"
a secret.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.spoken_numbers import UNITS, pair

from pipecat_steward.core.digits_said import digit_groups, spell_digits, spoken_digits
from pipecat_steward.core.heard_secrets import (
    mask_digit_runs,
    mask_numbers,
    secrets_in_capture,
    shaped_secrets,
    spoken_secrets,
)
from pipecat_steward.core.redaction import PLACEHOLDER, IndexedRedactor, Redactor


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("double four one two", "4412"),
        ("triple seven", "777"),
        ("Double-Oh Seven", "007"),
        ("triple 0 1", "0001"),
        ("double four double four", "4444"),
        ("a double espresso for two", "2"),
        ("double 44", "44"),
        ("forty four twelve", "4412"),
        ("nineteen oh five", "1905"),
        ("four thousand four hundred and twelve", "4412"),
        ("two thousand and six", "2006"),
        ("twenty-five", "25"),
        ("a hundred", "100"),
    ],
)
def test_a_number_is_read_as_its_digits(text: str, digits: str) -> None:
    assert "".join(spoken_digits(text)) == digits


def test_a_run_reads_each_way_of_saying_as_one_group() -> None:
    assert list(digit_groups("code double four 12 triple oh and forty one eleven")) == [
        ("double four 12 triple oh", ["44", "12", "000"]),
        ("forty one eleven", ["41", "11"]),
    ]
    # A comma is a pause between groups of one number.
    assert list(digit_groups("it's four one, one one")) == [
        ("four one, one one", ["4", "1", "1", "1"])
    ]


def test_spelling_keeps_where_each_run_of_number_words_came_from() -> None:
    text = "it is double four, forty four and double trouble"
    spelled = spell_digits(text)
    assert spelled.text == "it is 44, 44 and double trouble"
    assert spelled.changes == ((6, 17, 6, 8), (19, 29, 10, 12))
    assert spelled.original(6, 8) == (6, 17)
    assert spelled.original(7, 12) == (6, 29)  # a span inside a run takes all of it
    assert spell_digits("no numbers here").changes == ()


@pytest.mark.parametrize(
    ("secret", "text", "redacted"),
    [
        ("4412", "it is double four one two", f"it is {PLACEHOLDER}"),
        ("4412", "double 4 1 2!", f"{PLACEHOLDER}!"),
        ("4412", "double-four, one, two ok", f"{PLACEHOLDER} ok"),
        ("7772", "triple seven two", PLACEHOLDER),
        ("4444", "call double four double four now", f"call {PLACEHOLDER} now"),
        ("0071", "double oh seven one", PLACEHOLDER),
        ("double four one two", "it was 4412", f"it was {PLACEHOLDER}"),
        ("double trouble", "my double trouble", f"my {PLACEHOLDER}"),
        ("4412", "double four one", "double four one"),
        ("4412", "my pin is forty four twelve", f"my pin is {PLACEHOLDER}"),
        ("4412", "forty-four, twelve", PLACEHOLDER),
        ("4412", "four thousand four hundred and twelve!", f"{PLACEHOLDER}!"),
        ("1990", "since nineteen ninety", f"since {PLACEHOLDER}"),
        ("forty four twelve", "it was 4 4 1 2", f"it was {PLACEHOLDER}"),
        # A longer number is not the secret, said in words as written in digits (44412).
        ("4412", "triple four one two", "triple four one two"),
        # Digits apart are read as one number with the ones around them, written or said.
        ("4412", "forty four one two three", PLACEHOLDER),
    ],
)
def test_a_secret_is_found_however_its_number_is_said(
    secret: str, text: str, redacted: str
) -> None:
    assert Redactor.of([secret]).redact(text) == redacted
    assert IndexedRedactor.of([secret, "unrelated"]).redact(text) == redacted
    assert Redactor.of([secret]).leaks(text) == (redacted != text)


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        ("my pin is double four one two", {"double four one two"}),
        ("PIN: triple seven two", {"triple seven two"}),
        ("my pin is triple seven", {"triple seven"}),
        ("my pin is double four", set()),
        ("my pin is four two", set()),
        ("my pin is 42abc", {"42abc"}),
        ("the pin, double oh seven one", {"double oh seven one"}),
        ("my pin is forty four twelve", {"forty four twelve"}),
        ("my password is forty-two-bananas", {"forty-two-bananas"}),
        ("my pin is twelve", set()),
    ],
)
def test_a_credential_said_in_number_words_is_named_whole(text: str, secrets: set[str]) -> None:
    assert spoken_secrets(text) == secrets


def test_a_number_said_in_words_is_a_secret_by_its_shape_and_in_a_capture() -> None:
    assert shaped_secrets("pin double four one two", 4) == {"double four one two"}
    assert shaped_secrets("pin forty four twelve", 4) == {"forty four twelve"}
    card = "forty one eleven eleven eleven eleven eleven eleven eleven"  # 4111 1111 1111 1111
    assert shaped_secrets(f"my card is {card} ok") == {card}
    assert "double four one two" in secrets_in_capture("it is double four one two")
    assert mask_digit_runs("code double four one two and 12") == f"code {PLACEHOLDER} and 12"
    assert mask_digit_runs("code forty four twelve, ok") == f"code {PLACEHOLDER}, ok"
    assert mask_digit_runs("triple one and 12") == "triple one and 12"


@pytest.mark.parametrize(
    ("piece", "masked"),
    [
        ("411", "#"),
        (" 1", " #"),
        ("forty four twelve", "#"),
        (" twelve", " #"),
        ("double four one two and 7", "# and #"),
        ("4111-1111", "#-#"),
        ("٤٤", "#"),
        ("a table for 4 at 7:30", "a table for # at #:#"),
        ("no number here", "no number here"),
        ("double", "double"),
    ],
)
def test_every_number_of_a_piece_is_masked_however_few_its_digits(piece: str, masked: str) -> None:
    assert mask_numbers(piece) == masked.replace("#", PLACEHOLDER)


def test_a_match_inside_a_run_of_number_words_redacts_the_whole_run() -> None:
    text = "say forty four twelve thirteen"  # "44 12 13": the match ends inside the run
    assert Redactor.of(["4412"]).redact(text) == f"say {PLACEHOLDER}"
    assert Redactor.of(["412"]).redact("say double four one two") == "say double four one two"


@st.composite
def said_number(draw: st.DrawFn) -> tuple[str, str]:
    """A number of 3 to 12 digits and one way of reading it out, digit by digit or in pairs."""
    digits = draw(st.text(alphabet="0123456789", min_size=3, max_size=12))
    parts: list[str] = []
    index = 0
    while index < len(digits):
        digit = digits[index]
        same = len(digits[index:]) - len(digits[index:].lstrip(digit))
        two = digits[index : index + 2]
        # "twenty" then "one" is said "twenty one": 21, so a pair of tens alone is not drawn.
        whole = len(two) == 2 and two[0] != "0" and (two[1] != "0" or two[0] == "1")
        if whole and draw(st.booleans()):
            parts.append(pair(int(two)))  # "forty four", "twelve", "ten"
            index += 2
            continue
        times = draw(st.integers(1, min(same, 3)))
        word = draw(
            st.sampled_from(
                [digit, UNITS[int(digit)], "oh"] if digit == "0" else [digit, UNITS[int(digit)]]
            )
        )
        parts.append(word if times == 1 else f"{('double', 'triple')[times - 2]} {word}")
        index += times
    seps = draw(
        st.lists(st.sampled_from([" ", "-", ", ", " - "]), min_size=len(parts), max_size=len(parts))
    )
    said = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:], strict=False))
    return digits, said


@given(
    said_number(),
    st.sampled_from(["", "my code is ", "ok so "]),
    st.sampled_from(["", " thanks", "."]),
)
def test_any_reading_of_a_secret_is_redacted(
    number: tuple[str, str], before: str, after: str
) -> None:
    digits, said = number
    text = f"{before}{said}{after}"
    expected = f"{before}{PLACEHOLDER}{after}"
    assert "".join(spoken_digits(said)) == digits
    assert Redactor.of([digits]).redact(text) == expected
    assert IndexedRedactor.of([digits]).redact(text) == expected
    assert Redactor.of([said]).redact(f"{before}{digits}{after}") == expected
