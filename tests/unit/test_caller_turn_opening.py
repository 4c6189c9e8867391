"""One definition of opening a caller turn, whichever engine the agent runs on.

Every session keeps the caller's clear words for the engine (``heard``), takes the shared
caller-turn identity, and records the words redacted: a card number or a named credential
never reaches a turn record, a trace or an event, on the slot engine or the transaction desk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.engine import open_session

BOTS = Path(__file__).resolve().parents[2] / "bots"
CARD = "4111 1111 1111 1111"
UTTERANCES = [
    f"my card is {CARD}",
    "my password is tangerine-42",
    "yes",
    "two please",
]


@pytest.mark.parametrize("bot", ["bella_notte", "order_desk"])
@pytest.mark.parametrize("words", UTTERANCES)
def test_a_caller_turn_opens_the_same_way_on_every_engine(bot: str, words: str) -> None:
    session = open_session(load_agent(BOTS / bot))
    session.decide("", first_turn=True)
    before = session.caller_turns.current
    session.decide(f"  {words} ")
    assert session.heard == words
    assert session.caller_turns.current == before + 1
    recorded = session.turns[-1].user
    assert CARD not in recorded and "tangerine-42" not in recorded
    assert recorded == session.secrets.redact(words)


@pytest.mark.parametrize("bot", ["bella_notte", "order_desk"])
def test_a_speculative_decision_opens_no_turn(bot: str) -> None:
    session = open_session(load_agent(BOTS / bot))
    session.decide("", first_turn=True)
    turns, heard = len(session.turns), session.heard
    session.decide("my card is 4111 1111 1111 1111", speculative=True)
    assert (len(session.turns), session.heard) == (turns, heard)
