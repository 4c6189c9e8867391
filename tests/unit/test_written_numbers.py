"""A secret number is found however it is written: brackets, dots, any dash, underscores.

A phone number reaches a trace as "(415) 555-1234" from a tool, and a model writes "078–05–1120"
with an en dash as readily as with a hyphen. Each way of writing a number must be redacted, in
every reader: a redactor over all secrets, an indexed one, a secure capture's digit runs and a
card's shape.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.heard_secrets import mask_digit_runs, shaped_secrets
from pipecat_steward.core.redaction import PLACEHOLDER, IndexedRedactor, Redactor

FORMATS = [
    ("4155551234", "call (415) 555-1234 now"),
    ("4155551234", "call (415)555-1234 now"),
    ("4155551234", "call 415_555_1234 now"),
    ("4155551234", "call 415\u2013555\u20131234 now"),  # en dash
    ("4155551234", "call 415\u2014555\u20141234 now"),  # em dash
    ("4155551234", "call 415\u2212555\u22121234 now"),  # minus sign
    ("4155551234", "call 415\u2011555\u20111234 now"),  # non-breaking hyphen
    ("4155551234", "call 415\u00a0555\u00a01234 now"),  # no-break space
    ("078-05-1120", "call 078\u201305\u20131120 now"),
    ("(415) 555-1234", "call 4155551234 now"),
]


@pytest.mark.parametrize(("secret", "text"), FORMATS)
def test_a_secret_number_is_found_however_it_is_written(secret: str, text: str) -> None:
    assert Redactor.of([secret]).redact(text) == f"call {PLACEHOLDER} now"
    assert IndexedRedactor.of([secret, "other"]).redact(text) == f"call {PLACEHOLDER} now"


def test_a_capture_masks_digit_runs_written_with_brackets_and_dashes() -> None:
    assert mask_digit_runs("call (415) 555\u20131234 now") == f"call ({PLACEHOLDER} now"


def test_a_card_written_with_en_dashes_has_the_shape_of_a_card() -> None:
    card = "4111\u20131111\u20131111\u20131111"
    assert shaped_secrets(f"card {card} ok") == {card}


SEPARATORS = st.sampled_from([" ", "-", ".", "\u2013", "\u2014", "\u2212", "_", ") ", "/"])


@given(st.text(alphabet="0123456789", min_size=3, max_size=16), st.lists(SEPARATORS, max_size=15))
def test_any_separators_between_the_digits_hide_no_secret(digits: str, seps: list[str]) -> None:
    written = digits[0] + "".join(
        (seps[i] if i < len(seps) else "") + d for i, d in enumerate(digits[1:])
    )
    text = f"it is {written}."
    assert Redactor.of([digits]).redact(text) == f"it is {PLACEHOLDER}."
    assert IndexedRedactor.of([digits]).redact(text) == f"it is {PLACEHOLDER}."


@pytest.mark.parametrize(
    "card",
    [
        "5555, 5555, 5555, 4444",
        "5555,5555,5555,4444",
        "five five five five, five five five five, five five five five, four four four four",
        "fifty five fifty five, fifty five fifty five, fifty five fifty five, forty four forty four",
    ],
)
def test_a_card_read_out_with_pauses_has_the_shape_of_a_card(card: str) -> None:
    """A speech-to-text service writes the pauses between a card's groups as commas."""
    assert shaped_secrets(f"charge {card} please") == {card}


SCRIPTS = {
    "arabic-indic": "٠١٢٣٤٥٦٧٨٩",
    "fullwidth": "０１２３４５６７８９",
    "devanagari": "०१२३४५६७८९",
    "bengali": "০১২৩৪৫৬৭৮৯",
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_a_secret_written_in_the_digits_of_another_script_is_found(script: str) -> None:
    """A model or a speech-to-text service may write digits of the caller's script."""
    digits = SCRIPTS[script]
    other = "".join(digits[int(d)] for d in "4155551234")
    for secret, text in [("4155551234", other), (other, "4155551234")]:
        assert Redactor.of([secret]).redact(f"call {text} now") == f"call {PLACEHOLDER} now"
        assert IndexedRedactor.of([secret]).redact(f"call {text} now") == f"call {PLACEHOLDER} now"
    card = " ".join(
        "".join(digits[int(d)] for d in group) for group in ("4111", "1111", "1111", "1111")
    )
    assert shaped_secrets(f"card {card} ok") == {card}
    assert mask_digit_runs(f"code {other} ok") == f"code {PLACEHOLDER} ok"


@given(
    st.text(alphabet="0123456789", min_size=3, max_size=12),
    st.lists(st.sampled_from(sorted(SCRIPTS)), min_size=12, max_size=12),
)
def test_digits_of_any_script_mixed_hide_no_secret(digits: str, scripts: list[str]) -> None:
    written = "".join(SCRIPTS[s][int(d)] for s, d in zip(scripts, digits, strict=False))
    assert Redactor.of([digits]).redact(f"it is {written}.") == f"it is {PLACEHOLDER}."
    assert IndexedRedactor.of([digits]).redact(f"it is {written}.") == f"it is {PLACEHOLDER}."
