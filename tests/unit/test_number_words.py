"""Numbers said in words read as the numbers they say, and nothing more."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.spoken_numbers import TEENS, TENS, UNITS

from pipecat_steward.core.number_words import number_value, spoken_numbers

SAID = [
    ("a table for four", ["4"]),
    ("twenty five of us", ["25"]),
    ("the twenty first", ["21"]),
    ("born december tenth nineteen ninety", ["10", "19", "90", "1990"]),
    ("twenty twenty six", ["20", "26", "2026"]),
    ("nineteen oh five", ["19", "5", "1905"]),
    ("january first two thousand and six", ["1", "2", "6", "2006"]),
    ("one hundred twenty", ["1", "20", "120"]),
    ("the first two", ["1", "2"]),
    ("oh well, and then", []),
    ("someone phoned at noon", []),
    ("forty-two", ["42"]),
]


@pytest.mark.parametrize(("text", "numbers"), SAID)
def test_runs_of_number_words_say_their_numbers(text: str, numbers: list[str]) -> None:
    words = text.replace("-", " ").replace(",", " ").split()
    assert spoken_numbers(words) == numbers


@pytest.mark.parametrize(
    ("word", "value"),
    [("zero", 0), ("nineteen", 19), ("ninety", 90), ("tenth", 10), ("ninetieth", 90), ("oh", None)],
)
def test_a_number_word_has_its_value(word: str, value: int | None) -> None:
    assert number_value(word) == value


NUMBERS = UNITS + TEENS


def in_words(n: int) -> str:
    """``n`` (below 10,000) as a caller says it: "one thousand two hundred thirty four"."""
    parts: list[str] = []
    thousands, rest = divmod(n, 1000)
    hundreds, rest = divmod(rest, 100)
    if thousands:
        parts += [NUMBERS[thousands], "thousand"]
    if hundreds:
        parts += [NUMBERS[hundreds], "hundred"]
    if rest >= 20:
        parts += [TENS[rest // 10 - 2]] + ([NUMBERS[rest % 10]] if rest % 10 else [])
    elif rest or not parts:
        parts.append(NUMBERS[rest])
    return " ".join(parts)


@given(st.integers(0, 9999), st.sampled_from(["", "about ", "a table for "]))
def test_any_number_said_in_words_is_read_as_itself(n: int, lead: str) -> None:
    assert str(n) in spoken_numbers(f"{lead}{in_words(n)} please".split())
