"""Secrets by what is heard, before or besides any value known to be secret.

A caller names a credential ("my PIN is 4412", "password: hunter22"); a number is read out
that has the shape of a payment card or of the agent's sensitive values; an utterance is heard
during a secure capture. Each gives values that :mod:`~pipecat_steward.core.redaction`'s
redactors then replace wherever they appear. Digits count written or said, in words or
as numbers ("four four one two", "double four one two", "forty four twelve"): each reader
looks at the text with its number words written as digits (``core.digits_said``) and gives
back the words as they were said. Pure: no IO.
"""

from __future__ import annotations

import functools
import re

from pipecat_steward.core.digits_said import digit_groups, spell_digits, spoken_digits
from pipecat_steward.core.redaction import MIN_SECRET, PLACEHOLDER, SEPARATORS

__all__ = [
    "CARD_LENGTHS",
    "CREDENTIAL_NAMES",
    "luhn",
    "mask_digit_runs",
    "mask_numbers",
    "secrets_in_capture",
    "shaped_secrets",
    "spoken_secrets",
]

_RUN = re.compile(rf"\d(?:{SEPARATORS}\d)*")  # digits in a row, with any separators
_DIGITS = re.compile(r"\d+")
_RUN_DIGITS = 4


def _digit_runs(text: str) -> list[tuple[int, int]]:
    """Where ``text`` has four digits or more in a row, written or said, separated anyhow."""
    spelled = spell_digits(text)
    return [
        spelled.original(m.start(), m.end())
        for m in _RUN.finditer(spelled.text)
        if len(re.findall(r"\d", m.group(0))) >= _RUN_DIGITS
    ]


def mask_digit_runs(text: str) -> str:
    """``text`` with every run of four digits or more (written or said) replaced."""
    return _masked(text, _digit_runs(text))


def mask_numbers(text: str) -> str:
    """``text`` with every number replaced, however few its digits, written or said.

    For a piece of a longer text ("411", "forty"): the digits of a secret streamed a few at a
    time are each too few to be told from any other number.
    """
    spelled = spell_digits(text)
    if spelled.changes:
        return _masked(text, spelled.spans_of(_DIGITS))
    return _masked(text, [m.span() for m in _DIGITS.finditer(text)])


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (in order, apart) replaced by the placeholder."""
    for start, end in reversed(spans):
        text = text[:start] + PLACEHOLDER + text[end:]
    return text


CREDENTIAL_NAMES = (
    *("password", "passcode", "pass code", "pin code", "pin number", "pin", "cvv", "cvc"),
    *("security code", "social security number", "social security", "ssn", "social"),
    *("card number", "account number", "routing number"),
)
"""What a speaker names a credential by; a longer name comes before a name it starts with."""

_CREDENTIAL = (
    rf"\b(?:{'|'.join(CREDENTIAL_NAMES)})"
    # A word of its own: "pineapple" and "Pinñata" name no PIN, while "pin4412" does. A
    # letter of any script continues the word (not a digit, nor the underscore).
    r"(?![^\W\d_])"
    r"(?:\s*['\u2019]s\b|\s+(?:is|was|to|will be|should be|it's|number is))?"  # "PIN's", "PIN is"
)
# Digits up to a space or a stop (three at least, see ``spoken_secrets``), or a word with a
# digit ("hunter22"); read where number words are digits ("four four one two": "4 4 1 2").
_NUMERIC = rf"\d(?:{SEPARATORS}\d)*(?![^\s,.;!?])|[^\s,.;!?]*\d[^\s,.;!?]*"
# Each credential name holds its first word. Spelling number words out writes digits, never
# letters, so a text without any of these words names no credential: most texts are neither
# spelled out nor scanned further. A word holding another ("password", "pass") is left out:
# a text holding it holds the shorter one too, and every text is looked through once per word.
_FIRST_WORDS = {name.split()[0] for name in CREDENTIAL_NAMES}
_CREDENTIAL_WORDS = tuple(
    sorted(w for w in _FIRST_WORDS if not any(o != w and o in w for o in _FIRST_WORDS))
)
# Matched as ``_CREDENTIAL`` matches them, in any case: "PİN" and "paſſword" too.
_CREDENTIAL_WORD = re.compile("|".join(_CREDENTIAL_WORDS), re.IGNORECASE)
_SPOKEN = re.compile(
    _CREDENTIAL
    # After a colon (or nothing), any value with a digit or a long word ("hunter-two-two");
    # after a comma or a pause ("PIN, 4412", "PIN... 4412") only a number: "my password,
    # Robert" names Robert, not a password.
    + rf"(?:\s*[:=\-]?\s*(?P<value>{_NUMERIC}|[^\s,.;!?]{{6,}})"
    + rf"|\s*(?:,|\.{{2,3}}|\u2026)\s*(?P<number>{_NUMERIC}))",
    re.IGNORECASE,
)


def _may_name_credential(text: str) -> bool:
    """False when ``text`` holds none of the words every credential name holds."""
    if text.isascii():  # ASCII lower case is the case folding the pattern applies
        lowered = text.lower()
        return any(word in lowered for word in _CREDENTIAL_WORDS)
    return _CREDENTIAL_WORD.search(text) is not None


# Pure on strings, and the same utterances and values are redacted many times per turn.
@functools.lru_cache(maxsize=4096)
def spoken_secrets(text: str) -> frozenset[str]:
    """Values a speaker names as a credential ("my password is …", "PIN 4412", "SSN …").

    A value must hold a digit or be at least six characters, so "my PIN is correct" names none.
    """
    return _named_credentials(text) if _may_name_credential(text) else frozenset()


def _named_credentials(text: str) -> frozenset[str]:
    """``spoken_secrets`` reading the whole text (without its quick look first)."""
    spelled = spell_digits(text)
    found: set[str] = set()
    for match in _SPOKEN.finditer(spelled.text):
        group = "value" if match.group("value") else "number"
        start, end = spelled.original(match.start(group), match.end(group))
        found.add(text[start:end].strip())  # as said: "forty four twelve", not "44 12"
    return frozenset(
        v
        for v in found
        if len(v) >= MIN_SECRET and v.lower() not in _NOT_SECRET and not _few_digits(v)
    )


def _few_digits(value: str) -> bool:
    """Whether ``value`` is only digits (written or said), fewer than a secret has."""
    rest = re.sub(rf"\d|{SEPARATORS}", "", spell_digits(value).text)
    return not rest and len(spoken_digits(value)) < MIN_SECRET


_NOT_SECRET = frozenset(
    {
        "correct",
        "changed",
        "expired",
        "locked",
        "forgotten",
        "working",
        "number",
        "please",
        "wrong",
        "incorrect",
        "missing",
        "invalid",
    }
)


def secrets_in_capture(text: str) -> frozenset[str]:
    """What an utterance heard during a secure capture makes secret.

    The whole utterance and every run of four or more digits in it, so a later echo of the
    number is caught too.
    """
    found = {text[start:end] for start, end in _digit_runs(text)}
    clean = " ".join(text.split())
    return frozenset({*found, clean} if len(clean) >= MIN_SECRET else found)


CARD_LENGTHS = range(13, 20)
"""Payment card numbers have 13 to 19 digits (ISO/IEC 7812) and pass the Luhn check."""


def luhn(digits: str) -> bool:
    """Whether a digit string passes the Luhn checksum (payment card numbers do)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _cards(groups: list[str]) -> bool:
    """Whether consecutive digit groups of one run spell a Luhn-valid card number."""
    for start in range(len(groups)):
        digits = ""
        for group in groups[start:]:
            digits += group
            if len(digits) > CARD_LENGTHS.stop - 1:
                break
            if len(digits) in CARD_LENGTHS and luhn(digits):
                return True
    return False


@functools.lru_cache(maxsize=4096)
def shaped_secrets(text: str, min_digits: int | None = None) -> frozenset[str]:
    """Digit runs in ``text`` that look like secrets before any value is known.

    A run is digits, written or as words, joined by spaces or dashes ("4111 1111-1111 1111",
    "four one one one …"). It is a secret when some of its consecutive groups form a payment
    card number (13 to 19 digits passing the Luhn check), or when it has at least
    ``min_digits`` digits (the shortest sensitive value the agent declares or has seen; see
    :func:`secret_digits`).
    """
    found: set[str] = set()
    for said, groups in digit_groups(text):
        count = sum(len(g) for g in groups)
        if (min_digits is not None and count >= min_digits) or _cards(groups):
            found.add(said)
    return frozenset(found)
