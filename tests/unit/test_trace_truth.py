"""The trace of a turn is the record of that turn: never a neighbour's, never one lost to whitespace."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing.scenario import turn_record

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"


@pytest.mark.parametrize("said", ["  Hi there", "Hi there  ", "\tHi there\n", " Hi  there "])
def test_surrounding_whitespace_does_not_lose_the_turn(said: str) -> None:
    session = StewardSession(load_agent(BELLA))
    session.decide(said, first_turn=True)
    record = turn_record(session, said)
    assert record.actions, "the engine's decision is in the record"
    assert record.user == said.strip()
    assert turn_record(session, said, 0) is record


def test_whitespace_only_words_start_no_turn() -> None:
    session = StewardSession(load_agent(BELLA))
    session.decide("   ", first_turn=True)
    assert [t.user for t in session.turns] == [""]


def test_a_turn_the_engine_never_saw_is_empty_even_when_the_words_repeat() -> None:
    session = StewardSession(load_agent(BELLA))
    session.decide("Yes", first_turn=True)
    since = len(session.turns)
    # The next "Yes" never reached the engine: its trace must not borrow the previous record.
    record = turn_record(session, "Yes", since)
    assert record is not session.turns[-1]
    assert not record.actions and not record.llm_calls and not record.bot
