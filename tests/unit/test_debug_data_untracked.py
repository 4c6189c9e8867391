"""The engine's per-inference debug data costs the cycle collector nothing while a call lives.

A call's turn records keep one ``invoke`` entry per inference for as long as the call runs,
and every full collection scans every tracked object that every live call holds. Held as
tuples of strings, the entry's data stops being tracked after a collection, while traces and
events still show each of its values as a list.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.records import trace_value

BOTS = Path(__file__).resolve().parents[2] / "bots"
WORDS = ["hi there", "my name is Sanne", "sanne@example.com", "yes", "thanks, bye"]


@pytest.mark.parametrize("bot", ["bella_notte", "lead_capture"])
def test_invoke_entries_are_untracked_after_a_collection(bot: str) -> None:
    session = open_session(load_agent(BOTS / bot))
    session.decide("", first_turn=True)
    for words in WORDS:
        session.decide(words)
    entries = [e for t in session.turns for e in t.events if e.tag == "invoke"]
    assert len(entries) >= len(WORDS)  # one per inference (an ended call takes no more)
    gc.collect()
    assert [gc.is_tracked(e.data) for e in entries] == [False] * len(entries)
    for entry in entries:
        shown = {k: trace_value(v) for k, v in entry.data.items()}
        assert all(type(shown[k]) is list for k in ("filled", "visible", "asking", "fired"))
