"""Digits as a text holds them: written, or said aloud and written down in words.

A speech-to-text service writes a number read aloud in digits or in words, depending on the
service and its settings: a PIN 4412 may reach the steward as "4412", "four four one two",
"double four one two", "forty four twelve" or "four thousand four hundred twelve". Code that
looks for digits in what was said (redaction above all) reads the text as :func:`spell_digits`
gives it: every run of number words written as the digits it says ("forty four twelve": "44
12"), with where each change came from, so a match in it is a span of the text itself. Then
one expression over digits finds a number however it was said.

Pure: no IO.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from pipecat_steward.core.number_words import DIGIT_WORDS, NUMBER_WORDS, said_digits

__all__ = [
    "SpelledText",
    "decimal_number",
    "digit_groups",
    "read_out_numbers",
    "spell_digits",
    "spoken_digits",
]

_WORD = r"\b(?:" + "|".join(sorted({*NUMBER_WORDS, *DIGIT_WORDS}, key=len, reverse=True)) + r")\b"
_SPACE = r"[ \t\-\u2010-\u2015\u2212]"  # a space or any dash
_REPEAT = rf"\b(?:double|triple){_SPACE}+(?:" + "|".join(DIGIT_WORDS) + r"|\d(?!\d))\b"
# Digits of other scripts ("٤٤١٢", fullwidth "４４１２") are read as the digits they are.
_OTHER_DIGITS = r"(?:(?![0-9])\d)+"
_TOKEN = rf"(?:{_REPEAT}|{_WORD}|{_OTHER_DIGITS})"
# "and" joins "two thousand and six", and only after hundreds or thousands.
_GAP = rf"(?:(?<=hundred)|(?<=thousand)){_SPACE}+and{_SPACE}+|{_SPACE}+"
_SAID_RUN = re.compile(rf"{_TOKEN}(?:(?:{_GAP}){_TOKEN})*", re.IGNORECASE)
_SPACES = re.compile(rf"{_SPACE}+")
_GROUP_SPLIT = re.compile(rf",{_SPACE}*|{_SPACE}+")
_SAID = {*NUMBER_WORDS, *DIGIT_WORDS, "double", "triple"}
# In an ASCII text a number word is a whole run of letters (the runs are read between word
# boundaries): a text none of whose letter runs is one holds none (most texts hold none).
_LETTERS = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
# Groups of digits as read out: apart by spaces or dashes, or by the commas of a pause.
_GROUP_RUN = re.compile(rf"\d+(?:(?:,{_SPACE}{{0,2}}|{_SPACE}{{1,3}})\d+)*")


@dataclass(frozen=True, slots=True)
class SpelledText:
    """A text with its number words written as digits, and where each change came from.

    Attributes:
        text: The text as digits ("my pin is 44 12").
        changes: For each run of number words: its span in the original text and in ``text``.
    """

    text: str
    changes: tuple[tuple[int, int, int, int], ...]

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` came from.

        A span that starts or ends inside a changed run takes all of the run.
        """
        return self._position(start, end=False), self._position(end, end=True)

    def spans_of(self, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
        """Where ``pattern`` matches ``text``, as spans of the original text, in order and apart.

        Empty when no number word was changed: the original text is ``text`` itself.
        """
        found: list[tuple[int, int]] = []
        if not self.changes:
            return found
        for match in pattern.finditer(self.text):
            start, end = self.original(match.start(), match.end())
            if found and start < found[-1][1]:
                before = found.pop()
                start, end = before[0], max(end, before[1])
            found.append((start, end))
        return found

    def _position(self, position: int, *, end: bool) -> int:
        shift = 0
        for start, stop, new_start, new_stop in self.changes:
            if position <= new_start:
                break
            if position < new_stop:
                return stop if end else start
            shift += (new_stop - new_start) - (stop - start)
        return position - shift


# Each reader of a text (credentials, shapes, candidates, the redactor) spells it again, one
# after another: the last few texts are enough, and no log line is kept for long.
@functools.lru_cache(maxsize=8)
def spell_digits(text: str) -> SpelledText:
    """``text`` with each run of number words written as the digits it says.

    "my pin is four four one two": "my pin is 4 4 1 2"; "double four": "44"; "forty four
    twelve": "44 12"; "two thousand and six": "2006"; digits of other scripts are ASCII
    digits ("٤٤١٢": "4412"). The groups of a run stand apart by a space. Other text is kept
    as it is.
    """
    if text.isascii() and _SAID.isdisjoint(_LETTERS.findall(text.lower())):
        return SpelledText(text, ())
    return _spelled(text)


def _spelled(text: str) -> SpelledText:
    """``spell_digits`` reading every run of number words (without its quick look first)."""
    parts: list[str] = []
    changes: list[tuple[int, int, int, int]] = []
    done = length = 0
    for run in _SAID_RUN.finditer(text):
        groups = said_digits([_ascii(w) for w in _SPACES.split(run.group(0).lower())])
        if not groups:
            continue
        said = " ".join(groups)
        parts += [text[done : run.start()], said]
        length += run.start() - done
        changes.append((run.start(), run.end(), length, length + len(said)))
        length += len(said)
        done = run.end()
    if not changes:
        return SpelledText(text, ())
    return SpelledText("".join([*parts, text[done:]]), tuple(changes))


def _ascii(word: str) -> str:
    """A word of digits of any script in ASCII digits ("٤٤": "44"); any other word as it is."""
    return "".join(str(unicodedata.decimal(c)) for c in word) if word.isdecimal() else word


def decimal_number(word: str) -> str:
    """A word of decimal digits of any script as the number it writes: "04", "٤", "４" are "4".

    Text, not an ``int``: a run of thousands of digits is no error.
    """
    return _ascii(word).lstrip("0") or "0"


def spoken_digits(text: str) -> list[str]:
    """Every digit in ``text``, written or said, in order ("PIN four 4 one": 4, 4, 1)."""
    return _DIGIT.findall(spell_digits(text).text)


def digit_groups(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each run of digit groups in ``text`` joined by spaces or dashes, however they were said.

    Yields the run as the original text has it ("four one one one 1111") and its groups of
    digits ("4", "1", "1", "1", "1111").
    """
    spelled = spell_digits(text)
    for match in _GROUP_RUN.finditer(spelled.text):
        start, end = spelled.original(match.start(), match.end())
        yield text[start:end], _GROUP_SPLIT.split(match.group(0))


def read_out_numbers(text: str) -> list[str]:
    """The numbers ``text`` reads out digit by digit, two digits or more, without leading zeros.

    "nine four one one zero": 94110; "double four one two": 4412; "oh two one": 21. A lone
    number ("twenty five", "four") reads as none: ``spoken_numbers`` reads numbers said.
    """
    runs = ["".join(groups) for _, groups in digit_groups(text)]
    return [run.lstrip("0") or "0" for run in runs if len(run) > 1]
