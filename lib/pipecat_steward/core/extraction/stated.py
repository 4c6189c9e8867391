"""Whether the caller's words state a value, and which words do (its source span).

A value is stated when every part of it was said: each word of a name, in any script; a
number written or in words ("4", "four"), with thousands separators or a decimal point
("1,200", "12.50"), or read out digit by digit ("nine four one one zero", "double four one
two"); a date by its year, its day and its month's number or name, possibly
across utterances ("born December 10th" … "1990"); a time of day by its hour on either clock
("17:00": "5 pm") and its minutes; a yes or a no by any word that says it. What was not
stated was derived: the slot engine confirms it aloud before it counts. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from pipecat_steward.core.digits_said import decimal_number, read_out_numbers
from pipecat_steward.core.extraction.context import ExtractionContext
from pipecat_steward.core.number_words import clock_said, spoken_numbers
from pipecat_steward.core.slots.affirm import AFFIRMING, caller_words, is_affirmation
from pipecat_steward.core.variables import JsonValue, VariableSpec
from pipecat_steward.core.words import word_list, word_set

__all__ = ["SPAN_LIMIT", "source_span"]

SPAN_LIMIT = 200
"""The most characters of the caller's words a source span keeps."""

# A yes is the confirmation classifier's vocabulary; a no is a negation ("I don't").
_YES_NO = AFFIRMING | word_set(
    "no nope nah not never don't dont doesn't isn't wasn't won't can't agree agreed please"
)
_MONTHS = word_list(
    "january february march april may june july august september october november december"
)
# Letters of any script (a name said in Cyrillic is said), apart from the digits between them.
_TOKEN = re.compile(r"[^\W\d_]+|\d+")
# A number as written: thousands separated by commas, a decimal part after a point.
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+")


def source_span(spec: VariableSpec, value: JsonValue, context: ExtractionContext) -> str | None:
    """The caller's words that state ``value`` (None when it was derived, not stated).

    Every part of the value must appear in the context (see the module docstring).
    """
    lines = context.lines
    if spec.type == "boolean":
        said = [line for line in lines[-1:] if _says_yes_or_no(line)]
        return said[0][:SPAN_LIMIT] if said else None
    needed = _needed(spec, value)
    tokens = {line: _tokens(line) for line in lines}
    used = [line for line in lines if any(_has(tokens[line], n) for n in needed)]
    pooled = [t for line in used for t in tokens[line]]
    if not needed or not all(_has(pooled, n) for n in needed):
        return None
    return " … ".join(used)[:SPAN_LIMIT]


def _tokens(text: str) -> list[str]:
    """Words and numbers, and the numbers said in words or read out.

    "for four": 4, "nineteen ninety": 1990, "nine four one one zero": 94110.
    """
    words = _TOKEN.findall(text.lower())
    tokens = [decimal_number(t) if t.isdecimal() else t for t in words]  # "04", "٤": 4
    written = [_canonical(n) for n in _NUMBER.findall(text)]  # "1,200", "12.50"
    return [*tokens, *written, *spoken_numbers(words), *read_out_numbers(text)]


def _canonical(number: str) -> str:
    """A number in one form: "1,200" and "1200" are "1200", "12.50" and 12.5 are "12.5"."""
    return format(Decimal(number.replace(",", "")).normalize(), "f")


def _needed(spec: VariableSpec, value: JsonValue) -> list[str]:
    if spec.type == "date" and isinstance(value, str):
        year, month, day = value.split("-")
        return [year, str(int(day)), f"{int(month)}|{_MONTHS[int(month) - 1]}"]
    clock = clock_said(value) if spec.type == "time" and isinstance(value, str) else None
    if clock is not None:  # "17:00" is said "5 pm"
        hours, minutes = clock
        return [hours, minutes] if minutes else [hours]
    if spec.type in ("integer", "number") and isinstance(value, (int, float)):
        # The sign ("minus", "below zero") is the model's reading; the number must be said.
        return [_canonical(str(abs(value)))]
    return _tokens(str(value))


def _says_yes_or_no(line: str) -> bool:
    return bool(_YES_NO.intersection(caller_words(line))) or is_affirmation(line)


def _has(tokens: Sequence[str], needed: str) -> bool:
    return any(alt in tokens for alt in needed.split("|"))
