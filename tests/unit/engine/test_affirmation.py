"""The confirmation classifier: code confirms only a reply that carries nothing of its own.

A table of labelled replies (plain and polite affirmations; replies with numbers, dates,
ordinals, ids, other names, contrast, negation and questions) and a property: putting any
number, date, ordinal or id anywhere into an affirmation makes it not an affirmation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.storage_support.intents import AT, CANCEL, CONTEST, catalog

from pipecat_steward.core.slots.affirm import is_affirmation
from pipecat_steward.core.transactions import (
    AskLLM,
    ConfirmedByCode,
    TransactionState,
    confirmation_gate,
    record_pre_validation,
    start,
)

CAT = catalog()
CASES_FILE = Path(__file__).with_name("affirmation_cases.txt")


def _cases() -> list[tuple[bool, str, tuple[str, ...]]]:
    cases: list[tuple[bool, str, tuple[str, ...]]] = []
    for line in CASES_FILE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, text, *rest = [part.strip() for part in f"{line} ".split("|")]
        pending = tuple(p.strip() for p in rest[0].split(",")) if rest and rest[0] else ()
        cases.append((label == "yes", text, pending))
    return cases


CASES = _cases()
AFFIRMATIONS = [text for ok, text, pending in CASES if ok and not pending]


def test_the_table_is_large_and_covers_both_labels() -> None:
    assert len(CASES) >= 300
    assert sum(ok for ok, _, _ in CASES) >= 100
    assert sum(not ok for ok, _, _ in CASES) >= 150


@pytest.mark.parametrize(("expected", "text", "pending"), CASES, ids=[c[1][:40] for c in CASES])
def test_labelled_reply(expected: bool, text: str, pending: tuple[str, ...]) -> None:
    assert is_affirmation(text, pending) is expected


NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=100_000).map(str),
    st.sampled_from(
        ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    ),
    st.sampled_from(
        ["eleven", "twelve", "fifteen", "twenty", "thirty", "hundred", "dozen", "couple"]
    ),
    st.decimals(min_value=0, max_value=1000, places=2).map(str),
)
DATES = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: f"{d.month}/{d.day}"),
    st.sampled_from(["January", "March", "May", "July", "October", "December"]),
    st.sampled_from(["Monday", "Friday", "Saturday", "today", "tomorrow", "tonight", "noon"]),
    st.sampled_from(["7 PM", "7:30", "19:30", "seven thirty", "eight pm", "midnight"]),
)
ORDINALS = st.one_of(
    st.integers(min_value=1, max_value=31).map(lambda n: f"{n}th"),
    st.sampled_from(["first", "second", "third", "fourth", "fifth", "eighteenth", "last", "next"]),
)
IDS = st.from_regex(r"[A-Z]{2,4}-[0-9]{3,6}", fullmatch=True) | st.from_regex(
    r"[a-z]{1,6}@[a-z]{2,6}\.com", fullmatch=True
)
CONTENT = st.one_of(NUMBERS, DATES, ORDINALS, IDS)


@given(
    st.sampled_from(AFFIRMATIONS),
    CONTENT,
    st.integers(min_value=0),
    st.sampled_from(["", "for ", "the ", "it's "]),
)
def test_inserting_content_makes_an_affirmation_not_one(
    text: str, content: str, position: int, lead: str
) -> None:
    assert is_affirmation(text)
    words = text.split()
    at = position % (len(words) + 1)
    changed = " ".join([*words[:at], f"{lead}{content}", *words[at:]])
    assert not is_affirmation(changed)
    assert not is_affirmation(changed, [text])


@given(
    st.sampled_from(AFFIRMATIONS),
    st.sampled_from(["?", " but", " actually", " not", " wait", " no"]),
)
def test_a_question_or_contrast_makes_an_affirmation_not_one(text: str, tail: str) -> None:
    assert not is_affirmation(f"{text.rstrip('.!')}{tail}")


@pytest.mark.parametrize(("expected", "text", "pending"), CASES)
def test_the_transaction_gate_shares_the_classifier(
    expected: bool, text: str, pending: tuple[str, ...]
) -> None:
    args = {"subject": pending[0] if pending else "gym", "amount": "71.99"}
    state = start(CAT, TransactionState(), CONTEST, args, at=AT)
    want = ConfirmedByCode() if expected else AskLLM()
    assert confirmation_gate(state, text) == want


@pytest.mark.parametrize(
    "reply", ["yes, it's PED-1003", "Yes, PED-1001", "yes cancel 1003", "Yes, the other one"]
)
def test_the_gate_never_confirms_an_order_the_caller_named_differently(reply: str) -> None:
    state = start(CAT, TransactionState(), CANCEL, {"order_id": "PED-1001"}, at=AT)
    state = record_pre_validation(state, eligible=True, result={"eligible": True}, at=AT)
    assert confirmation_gate(state, reply) == AskLLM()


@pytest.mark.parametrize(
    ("reply", "pending", "choices", "expected"),
    [
        ("Yes, great", "good", ["good", "great", "poor"], False),
        ("Yes, good", "good", ["good", "great", "poor"], True),
        ("Right", "left", ["left", "right"], False),
        ("Yes", "left", ["left", "right"], True),
        ("Yes, fine", "standard", ["standard", "fine dining"], False),
    ],
)
def test_a_word_of_another_choice_is_not_an_affirmation(
    reply: str, pending: str, choices: list[str], expected: bool
) -> None:
    assert is_affirmation(reply, [pending], choices) is expected


@given(
    st.sampled_from(AFFIRMATIONS), st.sampled_from(["great", "fine", "right", "perfect", "good"])
)
def test_an_affirming_word_that_is_another_choice_never_confirms(text: str, choice: str) -> None:
    reply = f"{text.rstrip('.!')} {choice}"
    assert not is_affirmation(reply, ["something else"], [choice, "something else"])
