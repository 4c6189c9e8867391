"""In a real pipeline the engine's step for the caller's words runs while the turn ends.

A voice pipeline's turn strategy waits a moment after the final transcript; the steward runs
the engine's step for those words in that wait. Each caller turn of a slot-engine bot then
finds its step made (a hit), and the call says and ends in exactly what it does when the
transcript ends the turn at once (then the turn is usually taken before anything is
anticipated).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.pipecat_support.scenario_call import halves, play_scenario

# isort: split
from pipecat.utils.string import TextPartForConcatenation, concatenate_aggregated_text

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.events import UserTranscript
from pipecat_steward.pipecat.steward import ANTICIPATE_AFTER_S, Steward
from pipecat_steward.runtime.anticipation import AnticipationStats
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.scripted_llm import ScriptedLLM

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = [
    ("bella_notte", "happy_path.yaml"),
    ("bella_notte", "correction_after_confirmation.yaml"),
    ("lead_capture", "seed_003_four_turns.yaml"),
    ("lead_capture", "invalid_email.yaml"),
]


async def call(
    bot: str,
    name: str,
    turn_end_s: float,
    *,
    split: bool = False,
    guesses: Callable[[str], str] | None = None,
) -> tuple[list[str], Any, AnticipationStats]:
    played = await play_scenario(bot, name, turn_end_s, split=split, guesses=guesses)
    return played.spoken, played.state, played.stats


def caller_turns(bot: str, name: str) -> list[str]:
    return [t.user for t in load_scenario(BOTS / bot / "scenarios" / name).turns if t.user.strip()]


@pytest.mark.parametrize(("bot", "name"), SCENARIOS)
async def test_every_caller_turn_finds_its_step_made_and_the_call_is_unchanged(
    bot: str, name: str
) -> None:
    # A wait far longer than the moment the steward lets pass, so a busy machine still hits.
    spoken, state, stats = await call(bot, name, turn_end_s=0.25)
    at_once = await call(bot, name, turn_end_s=0.0)
    turns = [t for t in load_scenario(BOTS / bot / "scenarios" / name).turns if t.user.strip()]
    assert (stats.made, stats.hits, stats.misses) == (len(turns), len(turns), 0)
    assert (spoken, state) == at_once[:2]


@pytest.mark.parametrize(("bot", "name"), SCENARIOS)
async def test_turns_heard_as_two_transcripts_find_their_step_made_for_the_whole_turn(
    bot: str, name: str
) -> None:
    spoken, state, stats = await call(bot, name, turn_end_s=0.25, split=True)
    whole = await call(bot, name, turn_end_s=0.0)
    turns = [t for t in load_scenario(BOTS / bot / "scenarios" / name).turns if t.user.strip()]
    assert (stats.hits, stats.misses) == (len(turns), 0)
    assert (spoken, state) == whole[:2]


@pytest.mark.parametrize(
    ("parts", "spaced"),
    [
        (["A table for 4", "on July 17th, please"], False),
        (["A table for 4", " on July 17th, please"], True),
    ],
)
async def test_a_turn_heard_as_two_transcripts_is_anticipated_as_the_aggregator_joins_it(
    parts: list[str], spaced: bool
) -> None:
    """STT services differ in whether a transcript carries its spaces; pipecat's join rule."""
    steward = Steward(load_agent(BOTS / "bella_notte"))
    steward.attach(ScriptedLLM([]))
    steward.session.decide("", first_turn=True)
    steward.session.spoke("How many guests will be dining?", "llm")
    turn = steward.session.caller_turns.heard()
    for text in parts:
        steward.relay.bus.publish(
            UserTranscript(text=text, user_id="caller", source="cascade", turn=turn, spaced=spaced)
        )
    await asyncio.sleep(4 * ANTICIPATE_AFTER_S)
    joined = concatenate_aggregated_text(
        [TextPartForConcatenation(t, includes_inter_part_spaces=spaced) for t in parts]
    )
    assert joined == "A table for 4 on July 17th, please"
    steward.session.decide(joined)
    stats = steward.session.anticipation.stats
    assert (stats.made, stats.hits) == (1, 1)  # the first transcript alone was never stepped


async def test_a_transcript_is_noted_in_place_and_wakes_no_steward_task() -> None:
    """The steward reads the caller's transcript as the relay publishes it (a bus tap): on the
    transcript's way to the user aggregator it costs no task wake, and its step is still made."""
    steward = Steward(load_agent(BOTS / "bella_notte"))
    steward.attach(ScriptedLLM([]))
    steward.session.decide("", first_turn=True)
    steward.session.spoke("How many guests will be dining?", "llm")
    turn = steward.session.caller_turns.heard()
    before = asyncio.all_tasks()
    steward.relay.bus.publish(
        UserTranscript(
            text="A table for 4 on July 17th", user_id="caller", source="cascade", turn=turn
        )
    )
    woken = [t.get_name() for t in asyncio.all_tasks() - before]
    assert [name for name in woken if name.startswith("steward-events")] == []
    await asyncio.sleep(4 * ANTICIPATE_AFTER_S)
    assert steward.session.anticipation.stats.made == 1
    await steward.relay.bus.aclose()


@pytest.mark.parametrize(("bot", "name"), SCENARIOS)
@pytest.mark.parametrize("turn_end_s", [0.0, 0.25])
async def test_an_interim_guess_the_final_confirms_has_the_one_step_the_inference_uses(
    bot: str, name: str, turn_end_s: float
) -> None:
    """With the turn ending on the final transcript nothing is left to hide the step in, but
    the STT service's interim guess came earlier: the step made for it is the inference's.
    When the turn's end leaves time to anticipate the final too, the step is not run again."""
    spoken, state, stats = await call(bot, name, turn_end_s=turn_end_s, guesses=str)
    plain = await call(bot, name, turn_end_s=0.0)
    turns = caller_turns(bot, name)
    assert (stats.made, stats.hits, stats.misses) == (len(turns), len(turns), 0)
    assert (spoken, state) == plain[:2]


@pytest.mark.parametrize(("bot", "name"), SCENARIOS)
@pytest.mark.parametrize("turn_end_s", [0.0, 0.25])
async def test_an_interim_guess_the_final_corrects_is_never_used_and_changes_nothing(
    bot: str, name: str, turn_end_s: float
) -> None:
    """The guess is the turn's first half: a step made for it is a miss at the inference, or
    replaced by the final's own step when the turn's end leaves time for one.

    With the turn ending on the transcript, whether the final's own step runs before the
    inference depends on the machine's load (it runs a moment after the transcript), so a
    wrong guess is a miss or, replaced in time, a hit; never a guess used for other words."""
    spoken, state, stats = await call(
        bot, name, turn_end_s=turn_end_s, guesses=lambda words: halves(words)[0]
    )
    plain = await call(bot, name, turn_end_s=0.0)
    turns = caller_turns(bot, name)
    wrong = sum(halves(words)[0] != words for words in turns)
    assert wrong >= 2  # the table has turns the guess gets wrong
    if turn_end_s:
        assert (stats.hits, stats.misses) == (len(turns), 0)
    else:
        assert stats.hits + stats.misses == len(turns)
        assert stats.misses <= wrong
    assert (spoken, state) == plain[:2]
