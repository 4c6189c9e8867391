"""Redaction by value: secrets are replaced wherever they appear, whatever field carries them.

Excluding a field by its name is not enough: a tool echoes a card number in ``message``, a
caller reads a secret aloud outside a capture, an agent repeats it. A :class:`Redactor` holds
the values themselves (every value of a sensitive variable, every secret heard during a secure
capture) and replaces each occurrence in any text with a placeholder before that text leaves
for an auxiliary model, a ledger, a trace or a log line.

Digits match with any spacing or punctuation between them, so ``4111111111111111`` is also
found as ``4111 1111 1111 1111`` or ``4111-1111-1111-1111``, and written or said as words
(``four one one one …``, ``double four …``, ``forty four twelve``, see ``core.digits_said``):
a redactor looks again in the text with its number words written as digits. Other text matches
case-insensitively with any run of whitespace. What makes a value secret by how it is heard
(named as a credential, shaped like a card) is ``core.heard_secrets``. Pure: no IO, no clock.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipecat_steward.core.digits_said import spell_digits, spoken_digits
from pipecat_steward.core.variables import VariableSpec

__all__ = [
    "MIN_SECRET",
    "PLACEHOLDER",
    "SECURE_PLACEHOLDER",
    "SEPARATORS",
    "as_text",
    "IndexedRedactor",
    "Redactor",
    "redact_tree",
    "secret_values",
    "secret_digits",
]

PLACEHOLDER = "[redacted]"
SECURE_PLACEHOLDER = "[secure capture: redacted]"
"""What an utterance heard during a secure capture becomes, everywhere."""

MIN_SECRET = 3
SEPARATORS = r"[\s.,\-\u2010-\u2015\u2212/()_]*"
"""What may stand between the digits of a number: "4111 1111", "4,412", "(415) 555-1234",
"078–05–1120" (any dash), "four, four, one"."""


def _pattern(secret: str) -> str:
    digits = spoken_digits(secret)
    if _is_number(secret, digits):
        # An area code's opening bracket goes with it: "(415) 555-1234" leaves no "(".
        return r"(?<!\d)\(?" + SEPARATORS.join(re.escape(d) for d in digits) + r"(?!\d)"
    words = secret.split()
    return r"\s+".join(re.escape(w) for w in words)


def _kept(secrets: Iterable[str]) -> frozenset[str]:
    """The secrets a redaction holds: stripped, and at least three characters long."""
    return frozenset(s.strip() for s in secrets if len(s.strip()) >= MIN_SECRET)


def _is_number(secret: str, digits: list[str]) -> bool:
    """Whether ``secret`` is matched as a number: its digits, with any separators between.

    It is when it has three digits or more (written or as words) and no more other
    characters than digits.
    """
    rest = "".join(re.sub(r"\d", "", spell_digits(secret).text).split())
    return len(digits) >= MIN_SECRET and len(rest) <= len(digits)


def _leaves(value: object) -> Iterable[str]:
    """Every value a structure holds, as text: what is secret when the structure is."""
    if isinstance(value, Mapping):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _leaves(item)  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(value, _COLLECTIONS):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _leaves(item)  # pyright: ignore[reportUnknownArgumentType]
    elif value is not None and not isinstance(value, bool):
        text = as_text(value).strip()
        if len(text) >= MIN_SECRET:
            yield text


_COLLECTIONS = (list, tuple, set, frozenset)
"""Containers whose items are values of their own (a mapping's values are too)."""


def as_text(value: object) -> str:
    """The text a value shows wherever it is written: bytes decoded, anything else ``str``."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def secret_values(specs: Iterable[VariableSpec], variables: Mapping[str, object]) -> frozenset[str]:
    """Every value (leaf values of structures too) of the sensitive variables that are set."""
    names = {s.name for s in specs if s.sensitive}
    return frozenset(text for n in names if n in variables for text in _leaves(variables[n]))


def secret_digits(specs: Iterable[VariableSpec], variables: Mapping[str, object]) -> int | None:
    """The fewest digits a sensitive value has: declared (``digits:``) or seen (set values).

    Only values made mostly of digits count (a password with two digits does not lower it).
    None when no sensitive variable declares or holds a number.
    """
    counts: list[int] = []
    for spec in specs:
        if not spec.sensitive:
            continue
        if spec.digits is not None:
            counts.append(spec.digits)
        if spec.name in variables:
            for text in _leaves(variables[spec.name]):
                digits = spoken_digits(text)
                if _is_number(text, digits):
                    counts.append(len(digits))
    return min(counts) if counts else None


def redact_tree(value: object, redact: Callable[[str], str]) -> Any:
    """A copy of ``value`` as plain JSON data, with ``redact`` applied to every string in it.

    Whatever carries a secret, the copy holds only JSON's own types: mappings become dicts,
    sequences and sets lists (a set's items in a stable order), and any other value (bytes, an
    object) its text (see :func:`as_text`), redacted like any string. Keys are redacted too.
    """
    # Exact builtin types first: every event field passes through here, and an isinstance
    # check against the ``Mapping`` ABC costs more than the redaction of a short string.
    kind = type(value)
    if kind is str:
        return redact(cast(str, value))
    if kind in _SCALARS:
        return value
    if kind is dict:
        items = cast(dict[object, object], value).items()
        return {_key(k, redact): redact_tree(v, redact) for k, v in items}
    if kind is list or kind is tuple:
        return [redact_tree(v, redact) for v in cast(Iterable[object], value)]
    return _redact_other(value, redact)


def _redact_other(value: object, redact: Callable[[str], str]) -> Any:
    """``redact_tree`` for the types its fast path does not name."""
    if isinstance(value, str):  # a str subclass (a StrEnum member): its text is its value
        return redact(str.__str__(value))
    if isinstance(value, (int, float)):  # an IntEnum member, say: a number in JSON
        return value
    if isinstance(value, Mapping):
        items = cast(Mapping[object, object], value).items()
        return {_key(k, redact): redact_tree(v, redact) for k, v in items}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v, redact) for v in cast(Iterable[object], value)]
    if isinstance(value, (set, frozenset)):
        items = [redact_tree(v, redact) for v in cast(Iterable[object], value)]
        return sorted(items, key=lambda item: (type(item).__name__, str(item)))
    return redact(as_text(value))


def _key(key: object, redact: Callable[[str], str]) -> str | int | float | bool | None:
    """A mapping key as a JSON object may hold it (a number or a redacted text)."""
    if type(key) is str:
        return redact(key)
    if isinstance(key, str):
        return redact(str.__str__(key))  # a StrEnum member's text is its value
    if key is None or isinstance(key, (int, float)):
        return key
    return redact(as_text(key))


_SCALARS: frozenset[type] = frozenset({int, float, bool, type(None)})


@dataclass(frozen=True, slots=True)
class Redactor:
    """Replaces every occurrence of its secrets with :data:`PLACEHOLDER`.

    Attributes:
        secrets: The secret values (at least three characters each).
    """

    secrets: frozenset[str] = frozenset()
    _regex: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, secrets: Iterable[str]) -> Redactor:
        """A redactor over ``secrets`` (shorter-than-three values are ignored)."""
        kept = _kept(secrets)
        if not kept:
            return cls()
        # Longest first, so no partial leftovers; then by value, so the same secrets give the
        # same expression in every process (set order changes with the hash seed).
        ordered = sorted(kept, key=lambda s: (-len(s), s))
        regex = re.compile("|".join(f"(?:{_pattern(s)})" for s in ordered), re.IGNORECASE)
        return cls(kept, regex)

    def adding(self, secrets: Iterable[str]) -> Redactor:
        """This redactor with more secrets (itself when nothing is new)."""
        more = _kept(secrets)
        return self if more <= self.secrets else Redactor.of(self.secrets | more)

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by the placeholder."""
        if self._regex is None or not text:
            return text
        for start, end in reversed(_found(self._regex, text)):
            text = text[:start] + PLACEHOLDER + text[end:]
        return text

    def leaks(self, text: str) -> bool:
        """Whether ``text`` still contains a secret."""
        return self._regex is not None and bool(_found(self._regex, text))


def _found(regex: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Where ``regex`` matches ``text`` as written or with its number words as digits.

    "forty four twelve" says 4412: it is read again as "44 12". The spans are in order, and
    those that overlap are one.
    """
    spans = sorted([m.span() for m in regex.finditer(text)] + spell_digits(text).spans_of(regex))
    found: list[tuple[int, int]] = []
    for start, end in spans:
        if found and start < found[-1][1]:
            start, end = found[-1][0], max(end, found.pop()[1])
        found.append((start, end))
    return found


@dataclass(frozen=True)
class IndexedRedactor:
    """A redactor over many secrets (every live call's) that tries only those a text can hold.

    One regular expression over hundreds of secrets tries each of them at every position of
    every text. Most texts hold none, and a cheap necessary condition shows which could:
    a secret of digits matches only where its digits stand in a row once everything but
    digits is dropped from the text (its number words read as digits), and a secret of words
    (in a text of ASCII characters, where ignoring case is lowercasing) only where its
    lowercased letters stand in a row once whitespace is dropped, in the text or in the text
    with its number words as digits. The redaction is a :class:`Redactor` over those candidates (plus
    any secrets the caller adds for this text), which gives what one over all of them gives.

    Attributes:
        secrets: Every secret.
    """

    secrets: frozenset[str] = frozenset()
    _digits: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    _words: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    _unkeyed: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def of(cls, secrets: Iterable[str]) -> IndexedRedactor:
        """An indexed redactor over ``secrets`` (shorter-than-three values are ignored)."""
        kept = _kept(secrets)  # no expression over them all: the candidates get one
        digits: list[tuple[str, str]] = []
        words: list[tuple[str, str]] = []
        unkeyed: set[str] = set()
        for secret in kept:
            found = spoken_digits(secret)
            if _is_number(secret, found):
                digits.append(("".join(found), secret))
            elif secret.isascii():
                words.append(("".join(secret.lower().split()), secret))
            else:  # another alphabet's case rules: always a candidate
                unkeyed.add(secret)
        return cls(kept, tuple(digits), tuple(words), frozenset(unkeyed))

    def candidates(self, text: str) -> frozenset[str]:
        """The secrets ``text`` could hold (a superset of those it holds)."""
        found = set(self._unkeyed)
        if self._digits:
            row = "".join(spoken_digits(text))
            found.update(s for key, s in self._digits if key in row)
        if not text.isascii():
            found.update(s for _, s in self._words)
        elif self._words:
            # A secret of words may hold number words ("hunter twenty two" is "hunter 22").
            spelled = spell_digits(text).text
            for said in (text, spelled) if spelled != text else (text,):
                row = "".join(said.lower().split())
                found.update(s for key, s in self._words if key in row)
        return frozenset(found)

    def redact(self, text: str, more: frozenset[str] = frozenset()) -> str:
        """``text`` with every secret, and each of ``more``, replaced by the placeholder."""
        secrets = self.candidates(text) | more if text else frozenset[str]()
        return _redactor_of(secrets).redact(text) if secrets else text


@functools.lru_cache(maxsize=256)
def _redactor_of(secrets: frozenset[str]) -> Redactor:
    # The candidates of log lines repeat (usually none, else the same few): compile once.
    return Redactor.of(secrets)
