"""One caller-turn identity: when the user aggregator merges two final transcripts into one user
message, the session, the monitor and the extractor still agree on the turn."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from tests.integration.test_monitor_pipeline import Rig, adherence, rig

from pipecat_steward.runtime.caller_turns import CallerTurns
from pipecat_steward.testing import Say
from pipecat_steward.testing.scripted_slm import ScriptedSLM, verdict


async def _merged_turn(r: Rig, first: str, second: str, reply: str) -> None:
    """Two final transcripts of one caller turn, queued back to back (the aggregator merges)."""
    r.queue[:] = [Say(reply)]
    await r.pipeline.say(first)
    await r.pipeline.say(second)
    await r.pipeline.settle()
    await r.steward.relay.bus.drain()
    await r.monitor.drain()
    await r.extractor.drain()


def _caller_turns(r: Rig) -> int:
    return sum(1 for t in r.steward.session.turns if t.user)


async def test_a_merged_transcript_is_one_turn_for_session_monitor_and_extractor() -> None:
    async with (
        ScriptedSLM(answer=adherence(lambda _: verdict())) as slm,
        rig(slm) as r,
    ):
        await _merged_turn(r, "Hi, it's", "Ada Lovelace", "Thanks Ada. What is your date of birth?")
        users = [m for m in r.pipeline.context.get_messages() if m.get("role") == "user"]
        assert len(users) == 1, users  # the aggregator merged the two transcripts
        assert _caller_turns(r) == 1
        assert r.monitor.turn == r.extractor.turn == r.steward.session.caller_turns.current == 1
        await r.turn("March third, 1990", Say("Thank you."))
        assert _caller_turns(r) == 2
        assert r.monitor.turn == r.extractor.turn == r.steward.session.caller_turns.current == 2


def test_transcripts_before_the_engine_takes_a_turn_join_it() -> None:
    turns = CallerTurns()
    assert [turns.heard(), turns.heard(), turns.taken()] == [1, 1, 1]
    assert turns.taken() == 2  # a turn no transcript announced (a scripted or direct run)
    assert [turns.heard(), turns.taken(), turns.heard()] == [3, 3, 4]
