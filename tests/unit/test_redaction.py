"""Redaction by value: any secret, in any spacing, in any text, becomes the placeholder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from pipecat_steward.cli.main import main
from pipecat_steward.core.heard_secrets import (
    luhn,
    secrets_in_capture,
    shaped_secrets,
    spoken_secrets,
)
from pipecat_steward.core.redaction import PLACEHOLDER, Redactor, secret_digits, secret_values
from pipecat_steward.core.variables import VariableSpec

DIGITS = st.text(alphabet="0123456789", min_size=4, max_size=19)
SEPARATORS = st.sampled_from(["", " ", "-", ".", "  ", " - ", "/"])
FILLER = st.text(alphabet="abcdefghij ,.:!?\n", max_size=40)


@given(DIGITS, SEPARATORS, FILLER, FILLER)
def test_a_numeric_secret_is_found_in_any_spacing(secret: str, sep: str, before: str, after: str) -> None:
    spoken = sep.join(secret)
    text = f"{before} {spoken} {after}"
    redacted = Redactor.of([secret]).redact(text)
    assert spoken not in redacted and PLACEHOLDER in redacted
    assert "".join(c for c in redacted if c.isdigit()) == ""  # the filler has no digits


@given(st.text(alphabet="abcdefXYZ-_!", min_size=3, max_size=20), FILLER, FILLER)
def test_a_text_secret_is_found_case_insensitively(secret: str, before: str, after: str) -> None:
    text = f"{before} {secret.upper()} {after}"
    assert secret.upper() not in Redactor.of([secret]).redact(text)


def test_digits_inside_a_longer_number_are_not_a_match() -> None:
    redactor = Redactor.of(["1234"])
    assert redactor.redact("order 912345") == "order 912345"
    assert redactor.redact("pin 1 2 3 4.") == f"pin {PLACEHOLDER}."


def test_sensitive_variables_give_every_leaf_value() -> None:
    specs = [
        VariableSpec(name="card", sensitive=True),
        VariableSpec(name="name"),
        VariableSpec(name="ids", type="list", sensitive=True),
    ]
    values = {"card": "4111111111111111", "name": "Ada", "ids": ["A-99812", {"x": 77123}], "flag": True}
    assert secret_values(specs, values) == {"4111111111111111", "A-99812", "77123"}


class _Member:
    def __str__(self) -> str:
        return "M-448812"


@pytest.mark.parametrize(
    ("value", "secrets"),
    [
        ({"A-99812", "B-11234"}, {"A-99812", "B-11234"}),
        (frozenset({"A-99812"}), {"A-99812"}),
        ({"ids": ({"77123"},)}, {"77123"}),
        (b"A-99812", {"A-99812"}),
        (_Member(), {"M-448812"}),
    ],
    ids=["set", "frozenset", "nested set", "bytes", "object"],
)
def test_a_sensitive_value_is_known_whatever_holds_it(value: object, secrets: set[str]) -> None:
    specs = [VariableSpec(name="ids", sensitive=True)]
    assert secret_values(specs, {"ids": value}) == secrets


def test_a_secure_capture_makes_the_utterance_and_its_numbers_secret() -> None:
    found = secrets_in_capture("it's 4111 1111 1111 1111, expiry 12 29")
    assert "4111 1111 1111 1111" in found and "it's 4111 1111 1111 1111, expiry 12 29" in found
    assert Redactor.of(found).redact("card_id=4111111111111111") == f"card_id={PLACEHOLDER}"


def test_values_named_as_credentials_are_secrets() -> None:
    assert spoken_secrets("my password is hunter2!") == {"hunter2"}
    assert spoken_secrets("SSN 078 05 1120 thanks") == {"078 05 1120"}
    assert spoken_secrets("my PIN is correct, I think") == frozenset()
    assert spoken_secrets("I'd like to book a table") == frozenset()


# A credential's name starts a secret only as a word of its own: a longer word that begins
# with it ("pineapple", "Pinocchio", "passwords") names none, while a value written right
# after it ("pin4412", "PIN:4412") is still one.
CREDENTIAL_WORDS = [
    ("I want the pineapple pizza", set()),
    ("two tickets for Pinocchio", set()),
    ("a pinkberry7 smoothie", set()),
    ("Passwordless login12 please", set()),
    ("Socialites2024 brunch", set()),
    ("cvvs checked 1234", set()),
    # A letter of any script continues the word, not only a to z.
    ("a Piñata7 party", set()),
    ("a Pinñata7 party", set()),
    ("the PINÉ4412 model", set()),
    ("Passwordé123 typo", set()),
    ("cvvß123 ok", set()),
    ("the slot Pin4_Xy1", {"4_Xy1"}),
    ("pin4412", {"4412"}),
    ("pin_4412", {"_4412"}),
    ("pin ñ4412", {"ñ4412"}),
    ("PIN:4412", {"4412"}),
    ("my pin is 4412", {"4412"}),
    ("card number 4111 1111 1111 1111", {"4111 1111 1111 1111"}),
    ("ssn-123456789", {"123456789"}),
]


@pytest.mark.parametrize(("text", "secrets"), CREDENTIAL_WORDS)
def test_a_credential_is_named_by_its_word_not_by_a_longer_word(
    text: str, secrets: set[str]
) -> None:
    assert spoken_secrets(text) == secrets


def test_a_sensitive_variable_marked_for_extraction_is_a_validation_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValidationError, match="sensitive and has `extraction: true`"):
        VariableSpec(name="ssn", sensitive=True, extraction=True, description="The SSN.")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "agent.yaml").write_text(
        yaml.safe_dump(
            {
                "prompt": "Hello.",
                "variables": [
                    {
                        "name": "ssn",
                        "sensitive": True,
                        "extraction": True,
                        "description": "The SSN.",
                    }
                ],
            }
        )
    )
    assert main(["validate", str(folder)]) == 1
    assert "variables[0]" in capsys.readouterr().out


def _with_luhn(body: str) -> str:
    for check in "0123456789":
        if luhn(body + check):
            return body + check
    raise AssertionError("unreachable")


@given(
    st.text("0123456789", min_size=12, max_size=18).map(_with_luhn),
    st.lists(st.sampled_from([" ", "-", "", "  "]), min_size=20, max_size=20),
)
def test_a_card_number_in_any_grouping_is_found_by_its_shape(card: str, seps: list[str]) -> None:
    spaced = "".join(d + seps[i] for i, d in enumerate(card)).strip(" -")
    text = f"sure, charge {spaced} please"
    found = shaped_secrets(text)
    assert found and all(s in text for s in found)
    redacted = Redactor.of(found).redact(text)
    assert "".join(c for c in redacted if c.isdigit()) == ""


@pytest.mark.parametrize(
    ("text", "min_digits", "found"),
    [
        ("card 4111 1111 1111 1111 exp 12 25", None, {"4111 1111 1111 1111"}),
        ("card 4111 1111 1111 1112", None, set()),  # fails the Luhn check
        ("ssn 219-09-9999 born 1990-12-10", 9, {"219-09-9999"}),
        ("ssn 219-09-9999", None, set()),  # no sensitive number declared or seen
        ("$40.00 for pat-1815 at 10 30", 9, set()),
        ("pin 4412", 4, {"4412"}),
    ],
)
def test_digit_runs_are_secrets_by_shape(text: str, min_digits: int | None, found: set[str]) -> None:
    assert shaped_secrets(text, min_digits) == found


def test_the_secret_length_is_declared_or_seen() -> None:
    specs = [
        VariableSpec(name="ssn", sensitive=True, digits=9),
        VariableSpec(name="pin", sensitive=True),
        VariableSpec(name="phone"),
    ]
    assert secret_digits(specs, {}) == 9
    assert secret_digits(specs, {"pin": "4412", "phone": "555"}) == 4
    assert secret_digits(specs[1:], {"pin": "hunter2"}) is None


# A number is found however the speech-to-text service wrote it: digits, words or both.
SPOKEN_NUMBERS = [
    ("4412", "my pin is four four one two", "my pin is [redacted]"),
    ("4412", "FOUR-four one TWO", "[redacted]"),
    ("4412", "4 four 1 two", "[redacted]"),
    ("4412", "four, four, one, two.", "[redacted]."),
    ("4412", "it's 4,412", "it's [redacted]"),
    ("4412", "I have four kids", "I have four kids"),
    ("4412", "four four one", "four four one"),
    ("4412", "44120", "44120"),
    ("4012", "four oh one two", "[redacted]"),
    ("4012", "four zero one two", "[redacted]"),
    ("four four one two", "PIN 4412 ok", "PIN [redacted] ok"),  # a secret heard in words
]


@pytest.mark.parametrize(("secret", "text", "redacted"), SPOKEN_NUMBERS)
def test_a_number_is_found_written_or_said_in_words(secret: str, text: str, redacted: str) -> None:
    assert Redactor.of([secret]).redact(text) == redacted


SPOKEN_CREDENTIALS = [
    ("my pin is four four one two", {"four four one two"}),
    ("the passcode is one two three four", {"one two three four"}),
    ("pin is four, four, one, two", {"four, four, one, two"}),
    ("my PIN's 4412", {"4412"}),
    ("my pin number\u2019s 4412", {"4412"}),
    ("the pin, 4412", {"4412"}),
    ("pin... 4412", {"4412"}),
    ("my pin is one", set()),
    ("my pin is correct", set()),
    # After a pause only a number is a value: a name or a word there is no credential.
    ("what's your password, Robert?", set()),
    ("I forgot my password, thanks for asking", set()),
    ("pin, four four one two", {"four four one two"}),
]


@pytest.mark.parametrize(("text", "secrets"), SPOKEN_CREDENTIALS)
def test_a_credential_read_out_in_words_or_after_a_pause_is_a_secret(
    text: str, secrets: set[str]
) -> None:
    found = spoken_secrets(text)
    assert found == secrets
    assert all(PLACEHOLDER in Redactor.of(found).redact(text) for _ in found)


def test_a_card_number_read_out_in_words_is_a_secret_before_any_value_is_known() -> None:
    said = "it's four one one one one one one one one one one one one one one one thanks"
    (card,) = shaped_secrets(said)
    assert Redactor.of([card]).redact(said) == "it's [redacted] thanks"
    assert Redactor.of([card]).redact("4111 1111 1111 1111") == PLACEHOLDER
    assert shaped_secrets("four one one one, one one one one") == set()  # no card, no digits


def test_a_number_heard_in_words_during_a_capture_is_caught_when_echoed_in_digits() -> None:
    secrets = secrets_in_capture("it is four four one two")
    assert Redactor.of(secrets).redact("your PIN 4412 is set") == "your PIN [redacted] is set"
