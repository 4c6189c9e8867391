"""A session redacts each string once while its secrets stay the same, and never serves a stale answer.

The memo is keyed on the current secrets: any change of a sensitive variable (a value set,
changed or cleared) or of the digit length a secret has must give the same text a fresh
redactor would give. Checked over random interleavings of variable changes and texts.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.integration.test_canaries import clinic_with_secrets

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.recorder import record_session
from pipecat_steward.events.schema import DebugEvent
from pipecat_steward.pipecat.redaction import SECURE_CAPTURE_VARIABLE, SessionSecrets
from pipecat_steward.runtime.engine import open_session

VALUES = ["opaltiger", "4000 1234 5678 9010", "123456789", "Opal Tiger", ""]
TEXTS = [
    "my word is opaltiger",
    "it is OPALTIGER, and 123 45 6789",
    "card 4000-1234-5678-9010 please",
    "nothing secret here",
    "opal tiger",
    "",
    "my password is bluefalcon9",
    "PIN 4412 and 5500 0000 0000 0004",
]
VARIABLES = ["portal_password", "card_number", "member_ssn"]


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    return load_agent(clinic_with_secrets(tmp_path_factory.mktemp("memo") / "clinic"))


step = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(VARIABLES), st.sampled_from(VALUES)),
    st.tuples(st.just("grow"), st.sampled_from(VARIABLES), st.sampled_from(VALUES)),
    st.tuples(st.just("say"), st.sampled_from(TEXTS), st.just("")),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=25))
def test_a_memoised_redaction_equals_a_fresh_one_after_any_change(
    agent: Agent, steps: list[tuple[str, str, str]]
) -> None:
    session = open_session(agent)
    secrets = session.secrets
    for op, a, b in steps:
        if op == "grow":  # a host adds to a set it already stored, in place
            variables: dict[str, Any] = session.state.variables  # a host may store any value
            held = variables.get(a)
            if isinstance(held, set):
                cast(set[str], held).add(b)
            else:
                variables[a] = {b}
            continue
        if op == "set":
            if b:
                session.state.variables[a] = b
            else:
                session.state.variables.pop(a, None)
            continue
        fresh = SessionSecrets(session).redact(a)
        assert secrets.redact(a) == fresh
        assert secrets.bound()(a) == fresh  # what redacts one event's strings together


said = st.one_of(
    step,
    st.tuples(st.sampled_from(["prepare", "hear"]), st.sampled_from(TEXTS), st.just("")),
    st.tuples(st.just("capture"), st.sampled_from(["on", ""]), st.just("")),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(said, max_size=25))
def test_preparing_words_changes_nothing_their_hearing_gives_or_learns(
    agent: Agent, steps: list[tuple[str, str, str]]
) -> None:
    # A session told the caller's words ahead (while their turn ends) against a twin that
    # was not: every hearing, and every redaction after it, must come out the same.
    ahead, twin = open_session(agent), open_session(agent)
    for op, a, b in steps:
        for session in (ahead, twin):
            variables = session.state.variables
            if op == "set":
                variables[a] = b
                if not b:
                    variables.pop(a)
            elif op == "capture":
                variables[SECURE_CAPTURE_VARIABLE] = bool(a)
        if op == "prepare":
            ahead.secrets.prepare(a)
        elif op == "hear":
            assert ahead.secrets.hear(a) == twin.secrets.hear(a)
        for text in TEXTS:
            assert ahead.secrets.redact(text) == twin.secrets.redact(text)


@pytest.mark.parametrize("holder", [set, list, dict], ids=["set", "list", "dict"])
def test_a_secret_added_in_place_is_redacted_at_once(agent: Agent, holder: type) -> None:
    session = open_session(agent)
    held = holder()
    session.state.variables["portal_password"] = held
    assert session.secrets.redact("opaltiger") == "opaltiger"  # not secret yet
    if isinstance(held, set):
        held.add("opaltiger")
    elif isinstance(held, list):
        held.append("opaltiger")
    else:
        held["word"] = "opaltiger"
    assert "opaltiger" not in session.secrets.redact("my word is opaltiger")


def test_each_event_is_redacted_with_the_secrets_of_its_moment(agent: Agent) -> None:
    # An event's strings are redacted with one lookup of the secrets: a secret set after one
    # event is redacted from the next, and every string of an event (keys too) alike.
    session = open_session(agent)
    publisher = EventPublisher("s")
    record_session(session, publisher)
    said = "my word is opaltiger"
    publisher.emit(DebugEvent, tag=said, data={said: [said]})
    session.state.variables["portal_password"] = "opaltiger"
    publisher.emit(DebugEvent, tag=said, data={said: [said]})
    before, after = publisher.texts()[-2:]
    assert before.count("opaltiger") == 3
    assert "opaltiger" not in after and after.count("[redacted]") == 3
