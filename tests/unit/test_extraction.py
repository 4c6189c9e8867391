"""Entity extraction, pure: eligibility, schema, context window, skips and the merge rules."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from pipecat_steward.core.extraction import (
    MAX_CHARS,
    MAX_PREVIOUS,
    ExtractionContext,
    SkipReason,
    build_context,
    build_schema,
    eligible,
    extraction_prompt,
    merge_extraction,
    skip_reason,
    source_span,
)
from pipecat_steward.core.slots import compile_flow
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.core.variables import VariableSpec

SPECS = (
    VariableSpec(name="patient_name", extraction=True, description="The patient's full name."),
    VariableSpec(name="date_of_birth", type="date", extraction=True, description="Birth date."),
    VariableSpec(name="party_size", type="integer", extraction=True, description="Guests."),
    VariableSpec(name="copay_consent", type="boolean", description="Agreed to pay now."),
    VariableSpec(
        name="plan", type="enum", values=("basic", "pro"), extraction=True, description="Plan tier."
    ),
    VariableSpec(name="card_number", sensitive=True, description="Card."),
    VariableSpec(name="auth_status", extraction=True, linked=True, description="Set by host."),
    VariableSpec(name="notes", extraction=True),  # no description
)
FLOW = compile_flow(
    {
        "slots": [
            {"name": "date_of_birth", "setter": "set_dob", "hint": "Birth date"},
            {"name": "party_size", "setter": "set_size", "hint": "Guests"},
        ]
    },
    [s.name for s in SPECS],
)
ELIGIBLE = eligible(SPECS)


def merge(values: dict[str, Any], lines: list[str], state: SessionState | None = None):
    return merge_extraction(ELIGIBLE, FLOW, state or SessionState(), values, build_context(lines))


def test_eligibility_excludes_sensitive_linked_and_undescribed_and_adds_expects() -> None:
    assert [s.name for s in ELIGIBLE] == ["patient_name", "date_of_birth", "party_size", "plan"]
    scoped = [s.name for s in eligible(SPECS, expects=("copay_consent", "card_number"))]
    assert scoped == ["copay_consent", "patient_name", "date_of_birth", "party_size", "plan"]


def test_every_property_is_nullable_and_required_and_the_prompt_says_null() -> None:
    schema = build_schema(ELIGIBLE)
    assert all(p["type"][1] == "null" for p in schema["properties"].values())
    assert schema["required"] == [s.name for s in ELIGIBLE]
    assert schema["additionalProperties"] is False
    jsonschema.validate(dict.fromkeys(schema["required"]), schema)
    assert schema["properties"]["plan"]["enum"] == ["basic", "pro", None]
    prompt = extraction_prompt(ELIGIBLE, ExtractionContext("Hi", ("earlier",)))
    assert "not stated → null" in prompt and '"earlier"' in prompt and prompt.endswith('"Hi"')


def test_context_is_the_latest_plus_six_previous_caller_utterances_cut_at_500() -> None:
    lines = [f"utterance {i} " + "x" * 600 for i in range(10)]
    context = build_context(lines)
    assert len(context.previous) == MAX_PREVIOUS
    assert context.latest.startswith("utterance 9") and len(context.latest) == MAX_CHARS
    assert context.previous[0].startswith("utterance 3")


@pytest.mark.parametrize(
    ("text", "kwargs", "reason"),
    [
        ("", {}, "empty"),
        ("   ", {}, "empty"),
        ("um... uh, hmm", {}, "non_lexical"),
        ("[noise] (cough)", {}, "non_lexical"),
        ("[Procedure check] The step is open.", {}, "synthetic"),
        ("anything", {"synthetic": True}, "synthetic"),
        ("4242 4242 4242 4242", {"secure_capture": True}, "secure_capture"),
        ("Yes", {}, None),
        ("1990", {}, None),
    ],
)
def test_skips(text: str, kwargs: dict[str, bool], reason: SkipReason | None) -> None:
    assert skip_reason(text, **kwargs) == reason


def test_null_never_clobbers() -> None:
    state = SessionState(variables={"patient_name": "Ada Lovelace"})
    merged = merge({"patient_name": None, "plan": None}, ["never mind"], state)
    assert merged.state.variables["patient_name"] == "Ada Lovelace"
    assert merged.written == () and merged.proposals == ()


def test_linked_and_sensitive_writes_are_refused_and_bad_types_too() -> None:
    specs = (*ELIGIBLE, SPECS[5], SPECS[6])
    merged = merge_extraction(
        specs,
        FLOW,
        SessionState(),
        {"auth_status": "verified", "card_number": "4242", "plan": "gold"},
        build_context(["I'm verified, card 4242, gold plan"]),
    )
    assert dict(merged.refused) == {
        "auth_status": "linked",
        "card_number": "sensitive",
        "plan": "not a enum",
    }
    assert "auth_status" not in merged.state.variables


def test_plain_variables_are_coerced_and_written() -> None:
    merged = merge(
        {"patient_name": " Ada Lovelace ", "plan": "PRO"}, ["Ada Lovelace, the pro plan"]
    )
    assert merged.state.variables == {"patient_name": "Ada Lovelace", "plan": "pro"}
    assert merged.written == ("patient_name", "plan")


def test_a_four_digit_birth_year_completes_an_earlier_month_and_day() -> None:
    lines = ["I was born on December 10th", "1990"]
    merged = merge({"date_of_birth": "1990-12-10"}, lines)
    record = merged.state.slots["date_of_birth"]
    assert record.status == "filled" and record.value == "1990-12-10"
    assert record.origin == "extraction"
    assert record.source == "I was born on December 10th … 1990"
    assert merged.state.variables["date_of_birth"] == "1990-12-10"


def test_a_derived_value_is_inferred_with_the_latest_utterance_as_its_source() -> None:
    merged = merge({"party_size": 2}, ["Just me and my wife"])
    record = merged.state.slots["party_size"]
    assert (record.status, record.value, record.source) == ("inferred", 2, "Just me and my wife")


def test_slot_merge_rules_hold_for_extraction_proposals() -> None:
    state = SessionState()
    state.slots["party_size"] = SlotRecord("filled", 4, "four of us", "user", 1)
    state.slots["date_of_birth"] = SlotRecord("declined", None, "rather not say", "user", 1)
    merged = merge(
        {"party_size": 6, "date_of_birth": "1990-12-10"}, ["six, born 10 12 1990"], state
    )
    assert merged.state.slots["party_size"].value == 4
    assert merged.state.slots["date_of_birth"].status == "declined"
    assert [p.taken for p in merged.proposals] == [False, False]


def test_source_spans() -> None:
    dob = SPECS[1]
    both = ExtractionContext("1990", ("born december 10",))
    assert source_span(dob, "1990-12-10", both) == "born december 10 … 1990"
    assert source_span(dob, "1990-12-10", ExtractionContext("in the winter")) is None
    yes = VariableSpec(name="ok", type="boolean", description="d")
    assert source_span(yes, True, ExtractionContext("Yes, charge it")) == "Yes, charge it"
    assert source_span(yes, True, ExtractionContext("charge it")) is None


# A value is stated when every word of it was said, whatever script it is written in; a value
# the caller did not say is not stated (it would be recorded as inferred, to be confirmed).
SPOKEN_IN_ANY_SCRIPT = [
    ("Иван Петров", "меня зовут Иван Петров", True),
    ("Иван Петров", "меня зовут Иван", False),
    ("Müller", "it's Müller with an umlaut", True),
    ("Müller", "it's Mueller", False),
    ("Müller", "it's Mäller", False),
    ("Nguyễn", "it's Nguyen", False),
    ("Ólafur", "Ólafur, yes", True),
    ("Ólafur", "yes", False),
    ("Nguyễn", "my surname is Nguyễn", True),
    ("Zoë", "Zoe", False),
    ("Dr. Ngozi Okafor", "with doctor Ngozi Okafor please", False),  # "Dr" was not said
    ("Ngozi Okafor", "with doctor Ngozi Okafor please", True),
]


@pytest.mark.parametrize(("value", "said", "stated"), SPOKEN_IN_ANY_SCRIPT)
def test_a_value_is_stated_by_its_words_in_any_script(value: str, said: str, stated: bool) -> None:
    name = SPECS[0]
    span = source_span(name, value, ExtractionContext(said))
    assert (span is not None) is stated
    if stated:
        assert span == said


# Numbers are said in words as often as in digits: "a table for four" states 4.
NUMBERS_IN_WORDS = [
    (2, 4, "a table for four", True),
    (2, 25, "twenty five of us", True),
    (2, 5, "twenty five of us", False),
    (2, 4, "a table for two", False),
    (2, 120, "one hundred twenty guests", True),
    (1, "1990-12-10", "born december tenth nineteen ninety", True),
    (1, "1990-12-10", "born december tenth nineteen eighty", False),
    (1, "2026-07-21", "the twenty-first of july twenty twenty six", True),
    (1, "1905-03-02", "march second nineteen oh five", True),
    (1, "2006-01-01", "january first two thousand and six", True),
    (1, "2006-01-01", "january first two thousand and five", False),
]

ZIP = VariableSpec(name="zip", type="string", extraction=True, description="Postcode.")
PIN = VariableSpec(name="pin", type="integer", extraction=True, description="A number.")
# Codes and numbers are read out digit by digit, in words or digits, a digit twice "double".
READ_OUT = [
    (ZIP, "94110", "my zip is nine four one one zero", True),
    (ZIP, "94110", "my zip is 9 4 1 1 0", True),
    (ZIP, "94110", "it's nine-four-one-one-oh", True),
    (ZIP, "02134", "oh two one three four", True),
    (ZIP, "94110", "nine four one one one", False),
    (PIN, 4412, "double four one two", True),
    (PIN, 4412, "four four one two", True),
    (PIN, 4412, "four one two", False),
    (ZIP, "5551234", "five five five one two three four", True),
    (ZIP, "5551234", "triple five one two three four", True),
    # Digits of any script are digits: a speech-to-text service may write the caller's.
    (PIN, 4, "a table for ٤ please", True),
    (PIN, 4, "a table for ４", True),
    (PIN, 4, "a table for ४", True),
    (ZIP, "04", "room ٠٤", True),
]


@pytest.mark.parametrize(("spec", "value", "said", "stated"), NUMBERS_IN_WORDS)
def test_a_number_said_in_words_states_it(spec: int, value: Any, said: str, stated: bool) -> None:
    span = source_span(SPECS[spec], value, ExtractionContext(said))
    assert (span is not None) is stated


@pytest.mark.parametrize(("spec", "value", "said", "stated"), READ_OUT)
def test_a_number_read_out_digit_by_digit_states_it(
    spec: VariableSpec, value: Any, said: str, stated: bool
) -> None:
    span = source_span(spec, value, ExtractionContext(said))
    assert (span is not None) is stated


def test_a_party_size_said_in_words_is_filled_not_inferred() -> None:
    """The caller said it: the slot engine does not ask them to confirm it again."""
    record = merge({"party_size": 4}, ["a table for four please"]).state.slots["party_size"]
    assert (record.status, record.value) == ("filled", 4)


ARRIVAL = VariableSpec(name="arrival", type="time", extraction=True, description="Arrival time.")
# A time of day is said by its hour on either clock, and its minutes when it has any.
TIMES_SAID = [
    ("17:00", "at 5 pm", True),
    ("17:00", "at five", True),
    ("17:00", "at 17:00", True),
    ("17:00", "at six", False),
    ("17:30", "five thirty pm", True),
    ("17:30", "at five", False),
    ("09:30", "nine thirty", True),
    ("00:15", "twelve fifteen", True),
]


@pytest.mark.parametrize(("value", "said", "stated"), TIMES_SAID)
def test_a_time_is_stated_by_its_hour_on_either_clock(value: str, said: str, stated: bool) -> None:
    assert (source_span(ARRIVAL, value, ExtractionContext(said)) is not None) is stated


# A yes or a no is stated by any word that says it, as the confirmation classifier reads one.
YES_NO_SAID = [
    ("absolutely", True),
    ("of course", True),
    ("uh huh", True),
    ("go ahead", True),
    ("yes please", True),
    ("definitely not", True),
    ("I don\u2019t want that", True),
    ("no thanks", True),
    ("I guess", False),
    ("maybe later", False),
    ("charge it", False),
]


@pytest.mark.parametrize(("said", "stated"), YES_NO_SAID)
def test_a_yes_or_no_is_stated_by_any_word_that_says_it(said: str, stated: bool) -> None:
    consent = VariableSpec(name="consent", type="boolean", description="Agreed.")
    assert (source_span(consent, True, ExtractionContext(said)) is not None) is stated


BUDGET = VariableSpec(name="budget", type="integer", extraction=True, description="Budget.")
PRICE = VariableSpec(name="price", type="number", extraction=True, description="Price.")
# A number is stated however it is written: thousands separators, a decimal point, words.
NUMBERS_WRITTEN = [
    (BUDGET, 1200, "about 1,200 dollars", True),
    (BUDGET, 1200, "twelve hundred", True),
    (BUDGET, 1200, "one thousand two hundred", True),
    (BUDGET, 1200, "1,300 dollars", False),
    (PRICE, 12.5, "$12.50 each", True),
    (PRICE, 12.5, "12 or 50", False),
    (PRICE, 3.0, "three", True),
    (BUDGET, -4, "minus 4", True),  # the sign is read by the model, the number said here
    (PRICE, -12.5, "negative twelve fifty", False),
    (PRICE, -12.5, "minus $12.50", True),
]


@pytest.mark.parametrize(("spec", "value", "said", "stated"), NUMBERS_WRITTEN)
def test_a_number_is_stated_however_it_is_written(
    spec: VariableSpec, value: float, said: str, stated: bool
) -> None:
    assert (source_span(spec, value, ExtractionContext(said)) is not None) is stated


def test_a_value_of_thousands_of_digits_is_checked_without_error() -> None:
    digits = "1" * 5000
    assert source_span(ZIP, digits, ExtractionContext(f"it is {digits}")) is not None
