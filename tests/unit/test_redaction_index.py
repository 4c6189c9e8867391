"""An indexed redactor gives what one regular expression over all its secrets gives.

It tries only the secrets a text could hold, so the check is that narrowing never drops one:
over random secrets (numbers, words, other alphabets and their case rules, other digits) and
texts that hold them written any way the redaction accepts (other separators, digits as
words, case and whitespace), the result equals a plain :class:`Redactor` over every secret.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.redaction import PLACEHOLDER, IndexedRedactor, Redactor

DIGITS = "0123456789"
OTHER_DIGITS = "٠١٢٣٤٥٦٧٨٩"  # Arabic-Indic: digits to the redaction too
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
FOLDED = "ıİſKéÉßµ"  # match ASCII letters, or each other, when case is ignored
SEPARATORS = [" ", "-", ".", "/", "  ", " - ", "\t", ""]
SPACES = [" ", "  ", "\t", "\n", "\u00a0", "\x1c", "\u2003"]

number = st.text(st.sampled_from(DIGITS), min_size=3, max_size=19) | st.text(
    st.sampled_from(OTHER_DIGITS + DIGITS), min_size=4, max_size=9
)
word = st.text(st.sampled_from(LETTERS + DIGITS[:3]), min_size=1, max_size=8)
other_word = st.text(st.sampled_from(LETTERS + FOLDED), min_size=2, max_size=6)
words = st.lists(word | other_word, min_size=1, max_size=3).map(" ".join)
secret = (number | words).filter(lambda s: len(s.strip()) >= 3)


WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
DIGIT_WORDS = dict(zip(DIGITS, WORDS, strict=True))


def said(digit: str) -> st.SearchStrategy[str]:
    """A digit as a transcript may hold it: the digit, or its word in any case."""
    word = DIGIT_WORDS.get(digit)
    if word is None:
        return st.just(digit)
    return st.sampled_from([digit, digit, word, word.upper(), "oh" if digit == "0" else word])


@st.composite
def written(draw: st.DrawFn, value: str) -> str:
    """``value`` as a text may hold it: digits split any way, other words in any case."""
    if sum(c.isdigit() for c in value) * 2 >= len(value.replace(" ", "")):
        digits = [draw(said(c)) for c in value if c.isdigit()]
        return "".join(d + draw(st.sampled_from(SEPARATORS)) for d in digits).rstrip()
    parts = value.split()
    cased = [draw(st.sampled_from([p, p.upper(), p.lower(), p.swapcase()])) for p in parts]
    return "".join(p + draw(st.sampled_from(SPACES)) for p in cased).rstrip()


filler = st.text(st.sampled_from(LETTERS + DIGITS + " -./:#" + FOLDED + OTHER_DIGITS), max_size=12)


@st.composite
def case(draw: st.DrawFn) -> tuple[list[str], str, list[str]]:
    secrets = draw(st.lists(secret, min_size=1, max_size=12))
    pieces = [draw(filler)]
    for _ in range(draw(st.integers(1, 3))):
        pieces += [draw(written(draw(st.sampled_from(secrets)))), draw(filler)]
    more = draw(st.lists(secret, max_size=2))
    return secrets, "".join(pieces), more


# Each kind of secret in the kind of text its index could get wrong.
EDGES = [
    (["ıst"], "x IST y", []),  # a dotless i matches I: a secret of another alphabet
    (["ſki"], "x SKI y", []),  # a long s matches S
    (["skip"], "x ſKIP y", []),  # an ASCII secret in a text of another alphabet
    (["Kelvin"], "the kelvin scale", []),  # the Kelvin sign matches k
    (["٤٥٦٧"], "code ٤-٥ ٦/٧ now", []),  # other digits, split
    (["4111 1111 1111 1111"], "4111 1111-1111.1111", ["1111"]),  # added secrets too
    (["opal tiger"], "OPALtiger", []),  # any whitespace between words
    (["4412"], "pin four FOUR one two", []),  # digits said as words
    (["four four one two"], "PIN 4412", []),  # a number heard as words, then written
]


@pytest.mark.parametrize(("secrets", "text", "more"), EDGES)
def test_each_kind_of_secret_is_found_where_it_is_written(
    secrets: list[str], text: str, more: list[str]
) -> None:
    indexed = IndexedRedactor.of(secrets)
    expected = Redactor.of([*secrets, *more]).redact(text)
    assert expected != text
    assert indexed.redact(text, frozenset(more)) == expected


@settings(max_examples=600, deadline=None)
@given(case())
def test_an_indexed_redactor_redacts_as_one_over_every_secret(
    example: tuple[list[str], str, list[str]],
) -> None:
    secrets, text, more = example
    indexed = IndexedRedactor.of(secrets)
    expected = Redactor.of([*secrets, *more]).redact(text)
    assert indexed.redact(text, frozenset(more)) == expected


def test_a_text_holding_no_secret_has_no_candidates() -> None:
    indexed = IndexedRedactor.of(["4111 1111 1111 1111", "opal tiger", "078-05-1120"])
    line = "LLMUserAggregator#0: User started speaking (strategy #12)"
    assert indexed.candidates(line) == frozenset()
    assert indexed.redact(line) == line


def test_written_forms_of_a_secret_are_candidates_and_redacted() -> None:
    indexed = IndexedRedactor.of(["4111 1111 1111 1111", "Opal Tiger"])
    for text in ("card 4111-1111-1111-1111 ok", "it is OPAL\ttiger", "4111111111111111"):
        assert indexed.candidates(text)
        assert PLACEHOLDER in indexed.redact(text)
