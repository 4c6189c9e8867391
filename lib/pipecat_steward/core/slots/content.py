"""May the caller's words this turn change an answer they already settled?

A settled answer changes only on a caller turn that carries content. The model's
``correct_slot`` is a reading of the caller's words; code checks that there were words to read:

- a blank turn, a bare affirmation ("that's right") or a filler ("hmm, let me think", "hold on
  a second", "not sure") carries nothing, so no correction happens on it;
- a bare affirmation accepts what the bot offered: it supports a correction to a value the
  bot's last words named, and no other;
- words that name the new value (a word or a number of it, numbers said or read out digit by
  digit and month names included) support it, and so do other words: whether they mean a change ("could you do so
  please?" after an offer, "I'd like to book a room") is the model's reading of language.

A wrong refusal costs one question to the caller; a wrong correction loses an answer the
caller gave, so the rule errs on refusing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipecat_steward.core.digits_said import decimal_number, read_out_numbers
from pipecat_steward.core.number_words import clock_said, number_value, spoken_numbers
from pipecat_steward.core.slots.affirm import is_affirmation
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.core.words import word_list, word_set

__all__ = ["carries_content", "spoken_form", "supports_correction"]

# Words of a turn that only holds the floor or hesitates.
HESITATION = word_set("""
    hmm hm mm um umm uh uhh er erm ah oh well so let me think see hold on a second sec moment
    minute wait just not sure i'm im i dunno know don't dont okay ok like you the it is that
    please bear with
""")
_MONTHS = word_list("""
    january february march april may june july august september october november december
""")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def _tokens(text: str) -> list[str]:
    # Words are cut before lowering: "İA" lowers to "i", a combining dot and "a", and the dot
    # is no letter, so cut after it would be two one-letter words that name nothing.
    return [t.lower() for t in _TOKEN.findall(text.replace("\u2019", "'"))]


def _normal(token: str) -> str:
    """A token in the form a value and a spoken word share.

    "08", "eight" and "eighth" are "8", "tickets" is "ticket".
    """
    ordinal = _ORDINAL.match(token)
    if ordinal:
        token = ordinal.group(1)
    # Decimal digits of any script are numbers; a superscript or circled digit ("²", "①")
    # passes ``isdigit`` but is no number ``int`` reads: it stays a word.
    if token.isdecimal():
        return decimal_number(token)
    number = number_value(token)
    if number is not None:
        return str(number)
    if token in _MONTHS:
        return str(_MONTHS.index(token) + 1)
    return token[:-1] if len(token) > 3 and token.endswith("s") else token


def carries_content(text: str) -> bool:
    """False for a blank turn, a bare affirmation or a filler; True for any other words."""
    words = _tokens(text)
    if not words or is_affirmation(text):
        return False
    return not all(w in HESITATION for w in words)


def supports_correction(
    text: str, value: JsonValue, offered: str = "", held: Iterable[JsonValue] = ()
) -> bool:
    """Whether the caller's words ``text`` may change a settled answer to ``value``.

    Args:
        text: The caller's words this turn.
        value: The value the correction would settle.
        offered: What the bot said last: a bare affirmation accepts a value the bot offered
            there ("Shall I make it 14:50?" "That's fine."), and nothing else.
        held: The values the conversation holds already: words ``value`` shares with them
            are not an offer of it (a read-back of ana@example.com does not offer
            bob@example.com, nor a party of 4 the answer 4 for another slot).
    """
    if _names(text, value) or (is_affirmation(text) and str(value).lower() in _YES):
        return True
    if not _tokens(text) or all(w in HESITATION for w in _tokens(text)):
        return False
    return _names(offered, value, held) if is_affirmation(text) else True


def _names(text: str, value: JsonValue, held: Iterable[JsonValue] = ()) -> bool:
    """Whether ``text`` names a word or number of ``value`` that no ``held`` value has."""
    words = _tokens(text)
    said = {_normal(t) for t in words} | {*spoken_numbers(words), *read_out_numbers(text)}
    # Small words ("not" of "not-an-email" in "not sure") name nothing.
    old = {t for v in held if v is not None for t in _value_tokens(v)} | HESITATION
    return any(t in said and (len(t) > 1 or t.isdecimal()) for t in _value_tokens(value) - old)


def spoken_form(value: JsonValue) -> str:
    """``value`` in the words that name it: a label's words apart ("ReserveHotel": "Reserve Hotel").

    Words that hold these name the value, as do the words of the value as written
    (``supports_correction``).
    """
    return _CAMEL.sub(" ", value) if isinstance(value, str) else str(value)


def _value_tokens(value: JsonValue) -> set[str]:
    # The words as written ("McDonald's" is said as one word) and, for a label, its words
    # apart ("ReserveHotel" is said "reserve a hotel").
    tokens = {_normal(t) for t in [*_tokens(str(value)), *_tokens(spoken_form(value))]}
    clock = clock_said(str(value))
    if clock is not None:  # "17:00" is said "5 pm" (or "17")
        hours, minutes = clock
        return {*hours.split("|"), *([minutes] if minutes else [])}
    return tokens


_YES = frozenset({"yes", "true"})
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
