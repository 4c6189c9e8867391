"""Play a scenario straight through the engine driver, without Pipecat.

The same ``Driver`` the Pipecat hook hosts runs here under the scripted host
(``pipecat_steward.runtime.conversation.ScriptedHost``): the scripted model's tool calls go
through the session's one tool entry (refused when not shown, as a model cannot call a tool it
does not see), its text is recorded, preempts are spoken verbatim. It imports no Pipecat module
and starts in a fraction of a second, which the crash tests need (a process per kill point);
the full pipeline stays the reference (``simulate.py``), and tests check they agree.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import Action
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.recorder import record_session
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.conversation import ScriptedHost
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.records import Inference, RecordedCall
from pipecat_steward.runtime.session import ConflictListener, StewardSession
from pipecat_steward.testing.player import ScenarioPlayer, play_scenario, scenario_setup
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioInference,
    ScenarioTurn,
    TurnClock,
    as_scenario,
)

__all__ = ["DirectPlayer", "ModelPolicy", "run_scenario_direct", "turn_model"]

ModelPolicy = Callable[[Action, ScenarioTurn], ScenarioInference | None]
"""Decides an inference once a turn's scripted ones are used up (None: the model stops).

The inference it returns is appended to the turn's ``llm`` list, so the scenario then holds
exactly what was played and replays it on any path.
"""


def turn_model(
    turn: ScenarioTurn, model: ModelPolicy | None = None
) -> Callable[[Action], Inference | None]:
    """The scripted model of one caller turn: its ``llm`` inferences, then ``model``'s.

    Once both are used up the model relays the engine's directive, as an obedient LLM would.
    """
    queue = list(turn.llm)

    def answer(action: Action) -> Inference | None:
        if not queue and model is not None:
            step = model(action, turn)
            if step is not None:
                turn.llm.append(step)  # recorded: the scenario replays what was played
                queue.append(step)
        if not queue:
            return Inference(say=action.directive) if action.directive else None
        step = queue.pop(0)
        calls = [RecordedCall(c.name, dict(c.args)) for c in step.calls]
        return Inference(calls, step.say or None)

    return answer


class DirectPlayer(ScenarioPlayer):
    """Caller turns go straight to the driver; a ``ScriptedHost`` plays the scripted model."""

    def __init__(
        self,
        session: StewardSession,
        clock: TurnClock,
        model: ModelPolicy | None,
        events: EventPublisher | None = None,
    ) -> None:
        self._session = session
        self.clock = clock
        self.model = model
        self.driver = Driver(session)
        self.recorder = record_session(session, events) if events is not None else None
        if self.recorder is not None:
            self.recorder.sync()  # after the restore: a resumed call continues its turn count

    @property
    def session(self) -> StewardSession:
        return self._session

    async def play(self, turn: ScenarioTurn) -> None:
        if turn.user.strip():  # a blank transcript starts no inference, as in a pipeline
            await ScriptedHost(self.driver, turn_model(turn, self.model)).turn(turn.user)

    def turn_ended(self, number: int) -> None:
        if self.recorder is not None:
            self.recorder.end_turn(number)


async def run_scenario_direct(
    agent: Agent | str | Path,
    scenario: Scenario | str | Path,
    *,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
    checkpointer: Checkpointer | None = None,
    on_conflict: ConflictListener | None = None,
    model: ModelPolicy | None = None,
    events: EventPublisher | None = None,
) -> list[dict[str, Any]]:
    """Play ``scenario`` through the driver; return one trace per caller turn.

    With a ``checkpointer`` the session is restored by identity first and completed turns are
    skipped, so a killed run resumes when run again. ``on_conflict`` is told once when another
    worker took the call over (as ``Steward.on_conflict`` is on a pipeline); it may end the run,
    e.g. by cancelling the task that drives it. A ``model`` answers the inferences the script
    leaves open (a generated model, e.g. the chaos model); turns that ``on_turn`` appends to
    ``scenario.turns`` are played too (a caller that reacts to the bot). ``events`` receives
    the call's conversation events.
    """
    scenario = as_scenario(scenario)  # a scenario file's path, too
    loaded, clock, options = scenario_setup(agent, scenario)
    session = open_session(loaded, clock=clock, checkpointer=checkpointer, **options)
    if on_conflict is not None:
        session.conflict_listeners.append(on_conflict)
    await session.restore()
    return await play_scenario(DirectPlayer(session, clock, model, events), scenario, on_turn)
