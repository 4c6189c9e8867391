"""One scenario of an example bot played through a real text pipeline with the steward attached.

For tests that compare the same call under different turn-end waits (what the steward does in
the wait must not change what the call says or ends in).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.anticipation import AnticipationStats
from pipecat_steward.testing.backend import scripted_backend
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.scenario import TurnClock, before_turn, load_scenario
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.simulate import ScriptedModel, scenario_step

BOTS = Path(__file__).resolve().parents[2] / "bots"

Watch = Callable[[ScriptedLLM], None]

GUESS_AHEAD_S = 0.25
"""How long an interim guess comes before its final transcript: far longer than the moment
the steward lets pass before anticipating, so a busy machine still anticipates the guess."""


@dataclass(frozen=True)
class PlayedCall:
    """What a played call said and ended in, how its anticipations fared, and its model."""

    spoken: list[str]
    state: Any
    stats: AnticipationStats
    llm: ScriptedLLM


def halves(words: str) -> list[str]:
    """The caller's words as two transcripts, split at the middle space (as an STT may)."""
    cut = words.find(" ", len(words) // 2)
    return [words] if cut < 0 else [words[:cut], words[cut + 1 :]]


async def play_scenario(
    bot: str,
    name: str,
    turn_end_s: float,
    *,
    split: bool = False,
    guesses: Callable[[str], str] | None = None,
    before_attach: Watch | None = None,
    after_attach: Watch | None = None,
) -> PlayedCall:
    """Play ``bots/<bot>/scenarios/<name>`` with the caller's turn ending ``turn_end_s`` late.

    Args:
        split: Say each caller turn as two transcripts (``halves``).
        guesses: Before each caller turn, an interim transcript of ``guesses(words)``, a
            while (``GUESS_AHEAD_S``) before the final one.
        before_attach: Called with the model before the steward attaches to it.
        after_attach: Called with the model once the steward is attached (outside its hook).
    """
    agent = load_agent(BOTS / bot)
    scenario = load_scenario(BOTS / bot / "scenarios" / name)
    steward = Steward(
        scripted_backend(agent, scenario.backend),
        rng=random.Random(scenario.seed),
        event_data=scenario.event_data,
        channel=scenario.channel,
        clock=TurnClock(),
    )
    await steward.start()
    model = ScriptedModel()
    llm = ScriptedLLM([])
    if before_attach is not None:
        before_attach(llm)
    steward.attach(llm)
    if after_attach is not None:
        after_attach(llm)
    pipeline = TextPipeline(llm, observers=steward.observers, turn_end_s=turn_end_s)
    async with pipeline:
        for turn in scenario.turns:
            before_turn(steward.session, turn)
            model.queue = [scenario_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(8 - llm.remaining))
            if guesses is not None and turn.user.strip():
                await pipeline.guess(guesses(turn.user))
                await asyncio.sleep(GUESS_AHEAD_S)
            for part in halves(turn.user) if split else [turn.user]:
                await pipeline.say(part)
            await pipeline.settle()
    stats = steward.session.anticipation.stats
    return PlayedCall(list(pipeline.spoken), steward.session.state, stats, llm)
