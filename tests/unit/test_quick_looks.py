"""The quick looks before reading a text for secrets never skip a text the full reading finds in.

Every text a session redacts (each caller utterance, each bot reply, each log line) is first
looked at quickly: without a number word no number words are spelled out, and without a word
every credential name holds no credential is looked for. A quick look that skipped a text the
full reading would change would let a PIN or a card said in words through, so each is checked
against the full reading on texts built to sit at their edges: number words and credential
names in any case (Unicode's too: "PİN", "paſſword"), glued to letters, digits or underscores,
digits of other scripts, and the separators that join a run.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.spoken_numbers import TEENS, TENS, UNITS

from pipecat_steward.core.digits_said import (
    _spelled,  # pyright: ignore[reportPrivateUsage]
    spell_digits,
)
from pipecat_steward.core.heard_secrets import (
    CREDENTIAL_NAMES,
    _named_credentials,  # pyright: ignore[reportPrivateUsage]
    spoken_secrets,
)

NUMBER_WORDS = [*UNITS, *TEENS, *TENS, "oh", "hundred", "thousand", "double", "triple", "and"]
CREDENTIALS = [*CREDENTIAL_NAMES, "PİN", "paſſword", "CVC", "Social", "account NUMBER"]
"""Every name the library knows a credential by, and some in other cases (Unicode's too)."""
GLUE = [" ", "  ", "-", "_", "'", ",", ".", ":", "=", " is ", "é", "ß", "x", "a", "4", "٤", "１"]


def _cased(word: str, how: int) -> str:
    return [word, word.upper(), word.title(), word.swapcase()][how]


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A text of number words, credential names, digits and glue, spaced or not."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        word = draw(st.sampled_from([*NUMBER_WORDS, *CREDENTIALS, "hunter22", "4412", "one1"]))
        parts.append(_cased(word, draw(st.integers(0, 3))))
        parts.append(draw(st.sampled_from(GLUE)))
    return "".join(parts)


@settings(max_examples=400)
@given(texts())
def test_spelling_out_skips_no_text_with_a_number_word(text: str) -> None:
    assert spell_digits(text) == _spelled(text)


@settings(max_examples=400)
@given(texts())
def test_looking_for_credentials_skips_no_text_that_names_one(text: str) -> None:
    assert spoken_secrets(text) == _named_credentials(text)


@pytest.mark.parametrize("name", CREDENTIALS)
@pytest.mark.parametrize("how", range(4))
def test_each_credential_name_in_any_case_names_its_number(name: str, how: int) -> None:
    text = f"my {_cased(name, how)} is 4412"
    assert spoken_secrets(text) == _named_credentials(text)
    if name.isascii() or how == 0:  # "PİN".title() is "Pi̇n": a dot joins the i, no PIN
        assert spoken_secrets(text) == {"4412"}


def test_the_texts_reach_both_sides_of_each_quick_look() -> None:
    # Texts the full reading changes, and texts it leaves, both pass the quick looks' tests.
    assert _spelled("PIN_four four one two").changes
    assert not _spelled("fourfour").changes
    assert _named_credentials("PİN 4412") == {"4412"}
    assert _named_credentials("paſſword: hunter22") == {"hunter22"}
    assert spoken_secrets("PİN 4412") == {"4412"}
    assert spell_digits("Four-Four One_") == _spelled("Four-Four One_")
