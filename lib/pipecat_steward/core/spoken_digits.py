"""Digits as a caller says them: "4412" is also "four four one two" and "4 four 1 two".

A speech-to-text service writes a number read aloud as digits or as words, depending on the
service and its settings, so everything that finds a number in what was said (a secret to
redact, a card number read out) reads both. A digit's word is its English name, and "oh"
for zero (as in "four oh one"). Pure: no IO.
"""

from __future__ import annotations

import re

__all__ = ["DIGIT", "SPOKEN_DIGIT", "SPOKEN_RUN", "digit_pattern", "run_groups", "spoken_digits"]

_NAMES = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
}
_WORDS_OF = {d: [w for w, v in _NAMES.items() if v == d] for d in "0123456789"}
_WORD = r"\b(?:" + "|".join(_NAMES) + r")\b"

DIGIT = rf"(?:\d|{_WORD})"
"""A regular expression for one digit, written or as its word (to match ignoring case)."""

_WRITTEN = re.compile(r"\d")
SPOKEN_DIGIT = re.compile(DIGIT, re.IGNORECASE)
"""One digit, written or as its word."""

SPOKEN_RUN = re.compile(rf"(?:\d+|{_WORD})(?:[ \t\-]{{1,3}}(?:\d+|{_WORD}))*", re.IGNORECASE)
"""Digit groups and digit words joined by spaces or dashes: a number read out in groups
("4111 1111", "four one one one"; "forty" is no digit word)."""


def spoken_digits(text: str) -> list[str]:
    """Every digit in ``text``, written or as a word, in order ("PIN four 4 one": 4, 4, 1)."""
    lowered = text.lower()
    if not any(name in lowered for name in _NAMES):  # most texts (log lines) say no digit
        return _WRITTEN.findall(text)
    found: list[str] = SPOKEN_DIGIT.findall(text)
    return [_NAMES.get(d.lower(), d) for d in found]


def digit_pattern(digit: str) -> str:
    """A regular expression for ``digit`` written or as its word (matched ignoring case)."""
    words = _WORDS_OF.get(digit, [])  # a digit of another script has no English word
    return "(?:" + "|".join([digit, *(rf"\b{w}\b" for w in words)]) + ")"


def run_groups(run: str) -> list[str]:
    """The digit groups of a ``SPOKEN_RUN`` match, each word as its digit ("41 four": 41, 4)."""
    return [_NAMES.get(g.lower(), g) for g in re.split(r"[ \t\-]+", run.strip()) if g]
