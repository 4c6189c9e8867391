"""One scenario loop: walk a scenario's caller turns through a player, one trace per turn.

A player is the path a caller turn takes to the engine: the real Pipecat pipeline
(``simulate.py``), the pipeline with the monitor and extractor attached (``monitored.py``), a
speech-to-speech pipeline on a provider fake (``simulate_s2s.py``), or the engine driver alone
(``direct.py``). Everything else happens alike on every path, here: the turns a restored
session already played are skipped, host writes and injected verdicts go in before the caller
speaks, the finished turn is counted and checkpointed, and its trace is taken from the
session's record of it. Framework-free: it imports no Pipecat module.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent, as_agent
from pipecat_steward.runtime.records import TurnRecord
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioInference,
    ScenarioTurn,
    TurnClock,
    before_turn,
    resume_point,
    scripted_backend,
    trace_turn,
    turn_record,
)
from pipecat_steward.testing.script import Call, Say, Step

__all__ = [
    "ScenarioPlayer",
    "TraceListener",
    "play_scenario",
    "scenario_setup",
    "scenario_step",
]

TraceListener = Callable[[dict[str, Any]], None]
"""Told each turn's trace as soon as the turn is played."""


class ScenarioPlayer:
    """The part of playing a scenario that differs by path: one caller turn into the engine.

    Attributes:
        clock: The evidence clock, set to each turn's number (None: the path has none).
    """

    clock: TurnClock | None = None

    @property
    def session(self) -> StewardSession:
        """The session the path drives."""
        raise NotImplementedError

    def before(self, number: int, turn: ScenarioTurn) -> None:
        """Set up turn ``number`` before the caller speaks: the clock, host writes, verdicts."""
        if self.clock is not None:
            self.clock.turn = number
        before_turn(self.session, turn)

    async def play(self, turn: ScenarioTurn) -> None:
        """Say the turn's words; the model answers from the turn's script; wait until done."""
        raise NotImplementedError

    @staticmethod
    def steps(turn: ScenarioTurn) -> list[Step]:
        """The turn's scripted inferences as model steps, in order."""
        return [scenario_step(i) for i in turn.llm]

    def turn_ended(self, number: int) -> None:
        """Turn ``number`` is played and saved: close its conversation events (if recorded)."""

    def trace(self, number: int, record: TurnRecord) -> dict[str, Any]:
        """The trace of turn ``number`` from the session's record of it."""
        return trace_turn(number, self.session, record)


async def play_scenario(
    player: ScenarioPlayer, scenario: Scenario, on_turn: TraceListener | None = None
) -> list[dict[str, Any]]:
    """Play ``scenario``'s caller turns through ``player``; return one trace per turn played.

    Turns a restored session already played are skipped. Turns appended to ``scenario.turns``
    while it plays (by ``on_turn``, say: a caller that reacts to the bot) are played too.
    """
    done = resume_point(player.session, scenario)
    traces: list[dict[str, Any]] = []
    for number, turn in enumerate(scenario.turns, 1):
        if number <= done:
            continue
        traces.append(await _play_turn(player, number, turn))
        if on_turn is not None:
            on_turn(traces[-1])
    return traces


async def _play_turn(player: ScenarioPlayer, number: int, turn: ScenarioTurn) -> dict[str, Any]:
    player.before(number, turn)
    since = len(player.session.turns)
    await player.play(turn)
    session = player.session
    session.turns_done = number
    await session.save()  # the turn count, for a resumed run to skip the turn
    player.turn_ended(number)
    return player.trace(number, turn_record(session, turn.user, since))


def scenario_step(inference: ScenarioInference) -> Step:
    """One scripted inference as a model step (text first, then the calls)."""
    items: list[Say | Call] = [Say(inference.say)] if inference.say else []
    return [*items, *(Call(c.name, c.args) for c in inference.calls)]


def scenario_setup(
    agent: Agent | str | Path, scenario: Scenario
) -> tuple[Agent, TurnClock, dict[str, Any]]:
    """What every path sets up from a scenario before its first turn.

    Returns:
        The agent (loaded from its folder if need be) with the scenario's scripted backend;
        the evidence clock the player sets to each turn's number; and the session options the
        scenario sets (seed, event data, channel and timeouts).
    """
    loaded = as_agent(agent)
    options: dict[str, Any] = {
        "rng": random.Random(scenario.seed),
        "event_data": scenario.event_data,
        "channel": scenario.channel,
        "gate_timeout_s": scenario.gate_timeout_s,
        "task_timeout_s": scenario.task_timeout_s,
    }
    return scripted_backend(loaded, scenario.backend), TurnClock(), options
