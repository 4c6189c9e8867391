"""Numbers as callers say them, for tests: the words, and a reading of them of the tests' own.

The tests check the library's readers of number words against this independent reading, so
one list of words serves every test that says a number.
"""

from __future__ import annotations

import re
from collections.abc import Callable

UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def pair(n: int) -> str:
    """``n`` (10 to 99) as said in a pair: "twelve", "forty four", "twenty"."""
    if n < 20:
        return TEENS[n - 10]
    return TENS[n // 10 - 2] + (f" {UNITS[n % 10]}" if n % 10 else "")


_WORDS = r"\b(%s)\b"
_TIMES = {"double": 2, "triple": 3}


def as_digits(text: str) -> str:
    """``text`` with number words as digits: "fifty five" is 55, "double four" 44."""

    def sub(pattern: str, spell: Callable[[re.Match[str]], str] | str, text: str) -> str:
        return re.sub(pattern, spell, text, flags=re.I)

    text = sub(
        rf"\b({'|'.join(TENS)})[ -]({'|'.join(UNITS[1:])})\b",
        lambda m: f"{TENS.index(m[1].lower()) + 2}{UNITS.index(m[2].lower())}",
        text,
    )
    text = sub(_WORDS % "|".join(TENS), lambda m: f"{TENS.index(m[1].lower()) + 2}0", text)
    text = sub(_WORDS % "|".join(TEENS), lambda m: f"1{TEENS.index(m[1].lower())}", text)
    text = sub(r"\boh\b", "0", text)
    text = sub(_WORDS % "|".join(UNITS), lambda m: str(UNITS.index(m[1].lower())), text)
    return sub(r"\b(double|triple) (\d)\b", lambda m: m[2] * _TIMES[m[1].lower()], text)
