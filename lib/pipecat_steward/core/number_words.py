"""Numbers as callers say them: "four", "twenty five", "the tenth", "four four one two".

A speech-to-text service writes a number said aloud in digits or in words, depending on the
service and its settings ("a table for four", "born december tenth nineteen ninety", "my PIN
is four four one two"), so code that reads numbers in what was said reads both:

- a number said: each number word ("four": 4, "tenth": 10, "ninety": 90), tens with their
  unit ("twenty five", "twenty-first": 25, 21), a year said in pairs ("nineteen ninety": 1990,
  "twenty twenty six": 2026, "nineteen oh five": 1905) and thousands ("two thousand and six":
  2006); a time of day by its hour on either clock ("17:00": "5 pm");
- digits read out one by one (a secret, a card number): see ``core.digits_said``.

Pure: no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipecat_steward.core.words import word_list

__all__ = [
    "DIGIT_WORDS",
    "NUMBER_WORDS",
    "clock_said",
    "number_value",
    "said_digits",
    "spoken_numbers",
]

_UNITS = word_list("""
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen
""")
_UNIT_ORDINALS = word_list("""
    zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
    thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth
""")
_TENS = word_list("twenty thirty forty fifty sixty seventy eighty ninety")
_TEN_ORDINALS = word_list(
    "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"
)


DIGIT_WORDS: dict[str, str] = {w: str(d) for d, w in enumerate(_UNITS[:10])} | {"oh": "0"}
"""Each word of a digit read out, and its digit ("oh" is a zero)."""

NUMBER_WORDS: tuple[str, ...] = (*_UNITS, *_TENS, "hundred", "thousand")
"""The words numbers are said with (ordinals apart)."""


def number_value(word: str) -> int | None:
    """The number one lower-case word says ("four": 4, "tenth": 10, "ninety": 90), else None."""
    for words, step, start in (
        (_UNITS, 1, 0),
        (_UNIT_ORDINALS, 1, 0),
        (_TENS, 10, 20),
        (_TEN_ORDINALS, 10, 20),
    ):
        if word in words:
            return start + step * words.index(word)
    return None


def spoken_numbers(words: Sequence[str]) -> list[str]:
    """Every number the lower-case number words among ``words`` say, as digits.

    "four" gives 4; "twenty five" 25 (not 20 or 5); "nineteen ninety" 19, 90 and 1990 (a year
    or two numbers); "oh" only joins a year ("nineteen oh five": 1905); an ordinal ends its
    number ("the first two": 1 and 2).
    """
    found: list[str] = []
    start = 0
    while start < len(words):
        end = start
        while end < len(words) and _in_number(words, end):
            end += 1
            if _is_ordinal(words[end - 1]):
                break  # an ordinal ends its number: "the first two" is 1, then 2
        if end > start:
            found += [str(n) for n in _run_numbers(words[start:end])]
        start = max(end, start + 1)
    return found


def _is_ordinal(word: str) -> bool:
    return word in _UNIT_ORDINALS or word in _TEN_ORDINALS


def _in_number(words: Sequence[str], index: int) -> bool:
    word = words[index]
    if number_value(word) is not None or word in ("hundred", "thousand"):
        return True
    # "and" joins "two thousand and six"; "oh" is the zero of "nineteen oh five".
    joins = word in ("and", "oh") and 0 < index < len(words) - 1
    return joins and _in_number(words, index - 1) and number_value(words[index + 1]) is not None


def _run_numbers(run: Sequence[str]) -> list[int]:
    """The numbers a run of number words says: its parts, pairs as years, and thousands."""
    parts = _parts([w for w in run if w not in ("and", "oh")])
    numbers = list(parts)
    for first, second in zip(parts, parts[1:], strict=False):
        if 10 <= first <= 99 and 0 <= second <= 99:  # "nineteen ninety", "nineteen oh five"
            numbers.append(first * 100 + second)
    if "thousand" in run or "hundred" in run:
        numbers.append(_thousands(run))
    return numbers


def _parts(words: Sequence[str]) -> list[int]:
    """Each number of a run: tens take the unit after them ("twenty five": 25)."""
    parts: list[int] = []
    for index, word in enumerate(words):
        value = number_value(word)
        if value is None:
            continue
        after = words[index - 1] if index else ""
        if after in _TENS and 0 < value < 10 and parts:
            parts[-1] += value  # "twenty five", "twenty-first"
        else:
            parts.append(value)
    return parts


def said_digits(words: Sequence[str]) -> list[str]:
    """The digits a run of lower-case number words says, in its groups.

    Each digit word is its digit ("oh" a zero), a teen its two ("twelve": 12), tens take the
    unit after them ("forty four": 44), "double" and "triple" repeat the digit after them
    ("double 4": 44); a run with hundreds or thousands is its one number ("two thousand and
    six": 2006). Other words ("and") say nothing.
    """
    if "hundred" in words or "thousand" in words:
        return [str(_thousands(words))]
    groups: list[str] = []
    index = 0
    while index < len(words):
        word, after = words[index], words[index + 1] if index + 1 < len(words) else ""
        group, used = _group(word, after)
        groups += [group] if group else []
        index += used
    return groups


def _group(word: str, after: str) -> tuple[str, int]:
    """The digits ``word`` says, with ``after`` when it takes it, and how many words it used."""
    digit = DIGIT_WORDS.get(after) or (after if len(after) == 1 and after.isdigit() else "")
    if word in _TIMES and digit:
        return digit * _TIMES[word], 2
    value = number_value(word)
    if word in _TENS and after in _UNITS[1:10]:
        return str(_value(word) + _value(after)), 2
    if word in DIGIT_WORDS:
        return DIGIT_WORDS[word], 1
    if word.isascii() and word.isdigit():  # digits already written among the words
        return word, 1
    return ("" if value is None else str(value)), 1


_TIMES = {"double": 2, "triple": 3}


def _value(word: str) -> int:
    value = number_value(word)
    assert value is not None
    return value


def _thousands(run: Sequence[str]) -> int:
    """The number a run with thousands or hundreds says ("two thousand and six": 2006)."""
    total, current = 0, 0
    for word in run:
        value = number_value(word)
        if word == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif word == "hundred":
            current = max(current, 1) * 100
        elif value is not None:
            current += value
    return total + current


_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::\d{2})?$")


def clock_said(value: str) -> tuple[str, str] | None:
    """How a time of day is said: its hours as alternatives, and its minutes ("" for none).

    "17:00" is said "17" or "5" ("17|5", ""); "09:30" is "9" and "30" ("9", "30"). None when
    ``value`` is no time of day.
    """
    clock = _CLOCK.match(value)
    if clock is None:
        return None
    hour, minute = int(clock.group(1)), int(clock.group(2))
    hours = dict.fromkeys([str(hour), str(hour % 12 or 12)])
    return "|".join(hours), str(minute) if minute else ""
