"""Numbers as callers say them: "four", "twenty five", "the tenth", "four four one two".

A speech-to-text service writes a number said aloud in digits or in words, depending on the
service and its settings ("a table for four", "born december tenth nineteen ninety", "my PIN
is four four one two"), so code that reads numbers in what was said reads both:

- a number said: each number word ("four": 4, "tenth": 10, "ninety": 90), tens with their
  unit ("twenty five", "twenty-first": 25, 21), a year said in pairs ("nineteen ninety": 1990,
  "twenty twenty six": 2026, "nineteen oh five": 1905) and thousands ("two thousand and six":
  2006); a time of day by its hour on either clock ("17:00": "5 pm");
- digits read out one by one (a secret, a card number): each written or as its word, "oh"
  for zero ("four oh one"), and "double" or "triple" before a digit for two or three of it
  ("double four one two": 4412).

Pure: no IO.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipecat_steward.core.words import word_list

__all__ = [
    "DIGIT",
    "SPOKEN_DIGIT",
    "SPOKEN_RUN",
    "clock_said",
    "digit_pattern",
    "repeat_spans",
    "repeats_spelled_out",
    "number_value",
    "read_out_numbers",
    "run_groups",
    "spoken_digits",
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


# Digits read out one by one.

_NAMES = {word: str(digit) for digit, word in enumerate(_UNITS[:10])} | {"oh": "0"}
_WORDS_OF = {d: [w for w, v in _NAMES.items() if v == d] for d in "0123456789"}
_WORD = r"\b(?:" + "|".join(_NAMES) + r")\b"
_TIMES = {"double": 2, "triple": 3}
# "double four", "triple 7": one digit said two or three times.
_REPEATED = r"\b(?:double|triple)[ \t\-]+(?:" + _WORD + r"|\d(?!\d))"

DIGIT = rf"(?:{_REPEATED}|\d|{_WORD})"
"""A regular expression for one digit, written or as its word, or a digit repeated ("double
four"); to match ignoring case."""

_WRITTEN = re.compile(r"\d")
SPOKEN_DIGIT = re.compile(DIGIT, re.IGNORECASE)
"""One digit, written or as its word, or a repeated one ("double four")."""

SPOKEN_RUN = re.compile(
    rf"(?:{_REPEATED}|\d+|{_WORD})(?:[ \t\-]{{1,3}}(?:{_REPEATED}|\d+|{_WORD}))*", re.IGNORECASE
)
"""Digit groups and digit words joined by spaces or dashes: a number read out in groups
("4111 1111", "four one one one", "double four one two"; "forty" is no digit word)."""

_REPEAT = re.compile(_REPEATED, re.IGNORECASE)
_SPACES = re.compile(r"[ \t\-]+")
_SAID = (*_NAMES, *_TIMES)  # a text with none of these words has only written digits


def _digits_of(said: str) -> str:
    """The digits one ``SPOKEN_DIGIT`` match or digit group says ("double four": "44")."""
    words = _SPACES.split(said.strip().lower())
    if len(words) == 2 and words[0] in _TIMES:
        return _NAMES.get(words[1], words[1]) * _TIMES[words[0]]
    return _NAMES.get(words[0], words[0]) if words else ""


def spoken_digits(text: str) -> list[str]:
    """Every digit in ``text``, written or said, in order ("PIN four 4 one": 4, 4, 1).

    A repeated digit is each of its digits ("double four": 4, 4).
    """
    lowered = text.lower()
    if not any(word in lowered for word in _SAID):  # most texts (log lines) say no digit
        return _WRITTEN.findall(text)
    return [d for said in SPOKEN_DIGIT.findall(text) for d in _digits_of(said)]


def read_out_numbers(text: str) -> list[str]:
    """The numbers ``text`` reads out digit by digit, two digits or more, without leading zeros.

    "nine four one one zero": 94110; "double four one two": 4412; "oh two one": 21. A lone
    digit word ("twenty five") reads none: ``spoken_numbers`` reads numbers said.
    """
    runs = ["".join(run_groups(run)) for run in SPOKEN_RUN.findall(text)]
    return [run.lstrip("0") or "0" for run in runs if len(run) > 1]


def digit_pattern(digit: str) -> str:
    """A regular expression for ``digit`` written or as its word (matched ignoring case)."""
    words = _WORDS_OF.get(digit, [])  # a digit of another script has no English word
    return "(?:" + "|".join([digit, *(rf"\b{w}\b" for w in words)]) + ")"


def run_groups(run: str) -> list[str]:
    """The digit groups of a ``SPOKEN_RUN`` match, each word as its digit ("41 four": 41, 4).

    A repeated digit is one group of its digits ("double four": 44).
    """
    groups = _SPACES.split(run.strip())
    out: list[str] = []
    for index, group in enumerate(groups):
        if not group or group.lower() in _TIMES:
            continue
        before = groups[index - 1].lower() if index else ""
        out.append(_digits_of(f"{before} {group}" if before in _TIMES else group))
    return out


def repeats_spelled_out(text: str) -> tuple[str, list[tuple[int, int, int, int]]] | None:
    """``text`` with each repeated digit said out in full ("double four": "four four").

    Returns the new text and, for each change, its span in ``text`` and in the new text
    (``(start, end, new_start, new_end)``); None when ``text`` repeats no digit.
    """
    spans: list[tuple[int, int, int, int]] = []
    parts: list[str] = []
    done = length = 0
    for match in _REPEAT.finditer(text):
        times, digit = _SPACES.split(match.group(0))
        said = " ".join([digit] * _TIMES[times.lower()])
        parts += [text[done : match.start()], said]
        length += match.start() - done
        spans.append((match.start(), match.end(), length, length + len(said)))
        length += len(said)
        done = match.end()
    if not spans:
        return None
    return "".join([*parts, text[done:]]), spans


def repeat_spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Where ``pattern`` matches ``text`` once its repeated digits are said out in full.

    The spans are ``text``'s, in order and apart; one that starts or ends inside a repeat
    ("double four") takes all of it. Empty when ``text`` repeats no digit.
    """
    spelled = repeats_spelled_out(text)
    if spelled is None:
        return []
    said, spans = spelled
    found: list[tuple[int, int]] = []
    for match in pattern.finditer(said):
        start, end = (
            _in_text(match.start(), spans, end=False),
            _in_text(match.end(), spans, end=True),
        )
        if found and start <= found[-1][1]:
            before = found.pop()
            start, end = before[0], max(end, before[1])
        found.append((start, end))
    return found


def _in_text(position: int, spans: list[tuple[int, int, int, int]], *, end: bool) -> int:
    """A position in the spelled-out text, in the original one (see ``repeats_spelled_out``)."""
    shift = 0
    for start, stop, new_start, new_stop in spans:
        if position <= new_start:
            break
        if position < new_stop:
            return stop if end else start
        shift += (new_stop - new_start) - (stop - start)
    return position - shift
