"""A digit said "double" or "triple" is two or three of it, wherever digits are read.

Callers read numbers out that way ("double four one two", "triple seven"), and a speech-to-text
service writes what it heard. Redaction must find such a secret, and name it whole when a
caller names a credential: a PIN said "double four one two" must not leave "four one two" in
clear, nor make the word "double" a secret.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.heard_secrets import (
    mask_digit_runs,
    secrets_in_capture,
    shaped_secrets,
    spoken_secrets,
)
from pipecat_steward.core.number_words import (
    repeat_spans,
    repeats_spelled_out,
    run_groups,
    spoken_digits,
)
from pipecat_steward.core.redaction import PLACEHOLDER, IndexedRedactor, Redactor

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


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
    ],
)
def test_a_repeated_digit_is_read_as_its_digits(text: str, digits: str) -> None:
    assert "".join(spoken_digits(text)) == digits


def test_a_run_reads_a_repeat_as_one_group() -> None:
    assert run_groups("double four 12 triple oh") == ["44", "12", "000"]


def test_spelling_out_keeps_the_spans_of_each_repeat() -> None:
    text = "it is double four, triple 7 and double trouble"
    assert repeats_spelled_out(text) == (
        "it is four four, 7 7 7 and double trouble",
        [(6, 17, 6, 15), (19, 27, 17, 22)],
    )
    assert repeats_spelled_out("no repeats here") is None


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
        # Said in words, a longer number that ends with the secret is redacted whole, as
        # "four four four one two" is: no digit can hide a part of it.
        ("4412", "triple four one two", PLACEHOLDER),
    ],
)
def test_a_secret_is_found_with_its_digits_repeated(secret: str, text: str, redacted: str) -> None:
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
    ],
)
def test_a_credential_said_with_repeats_is_named_whole(text: str, secrets: set[str]) -> None:
    assert spoken_secrets(text) == secrets


def test_a_number_said_with_repeats_is_a_secret_by_its_shape_and_in_a_capture() -> None:
    assert shaped_secrets("pin double four one two", 4) == {"double four one two"}
    assert "double four one two" in secrets_in_capture("it is double four one two")
    assert mask_digit_runs("code double four one two and 12") == f"code {PLACEHOLDER} and 12"
    assert mask_digit_runs("triple one and 12") == "triple one and 12"


def test_spans_start_and_end_at_whole_repeats() -> None:
    pattern = Redactor.of(["412"])._regex  # pyright: ignore[reportPrivateUsage]
    assert pattern is not None
    text = "say double four one two"
    assert repeat_spans(pattern, text) == [(4, len(text))]


@st.composite
def said_number(draw: st.DrawFn) -> tuple[str, str]:
    """A number of 3 to 12 digits and one way of reading it out."""
    digits = draw(st.text(alphabet="0123456789", min_size=3, max_size=12))
    parts: list[str] = []
    index = 0
    while index < len(digits):
        digit = digits[index]
        same = len(digits[index:]) - len(digits[index:].lstrip(digit))
        times = draw(st.integers(1, min(same, 3)))
        word = draw(
            st.sampled_from(
                [digit, WORDS[int(digit)], "oh"] if digit == "0" else [digit, WORDS[int(digit)]]
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
