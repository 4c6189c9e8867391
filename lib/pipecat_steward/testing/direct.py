"""Play a scenario straight through the engine driver, without Pipecat.

The same ``Driver`` the Pipecat hook hosts runs here under a tiny host: the scripted model's
tool calls go through the session (refused when not visible, as a model cannot call a tool it
does not see), its text is recorded, preempts are spoken verbatim. It imports no Pipecat module
and starts in a fraction of a second, which the crash tests need (a process per kill point);
the full pipeline stays the reference (``simulate.py``), and tests check they agree.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import Action, ToolCall
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.recorder import record_session
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.records import RecordedCall
from pipecat_steward.runtime.session import ConflictListener, StewardSession
from pipecat_steward.runtime.transactions import TransactionSession
from pipecat_steward.testing.player import (
    ScenarioPlayer,
    play_scenario,
    scenario_setup,
)
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioInference,
    ScenarioTurn,
    TurnClock,
)

__all__ = ["DirectPlayer", "ModelPolicy", "run_scenario_direct"]

ModelPolicy = Callable[[Action, ScenarioTurn], ScenarioInference | None]
"""Decides an inference once a turn's scripted ones are used up (None: the model stops).

The inference it returns is appended to the turn's ``llm`` list, so the scenario then holds
exactly what was played and replays it on any path.
"""


class _DirectHost:
    """The driver's host: a scripted model instead of an LLM service."""

    def __init__(
        self, driver: Driver, session: StewardSession, model: ModelPolicy | None = None
    ) -> None:
        self.driver = driver
        self.session = session
        self.queue: list[ScenarioInference] = []
        self.model = model
        self.turn: ScenarioTurn | None = None

    async def run_llm(self, action: Action) -> None:
        if not self.queue and self.model is not None and self.turn is not None:
            step = self.model(action, self.turn)
            if step is not None:
                self.turn.llm.append(step)  # recorded: the scenario replays what was played
                self.queue.append(step)
        if not self.queue:
            if action.directive:
                self.session.spoke(action.directive, "llm")
            return
        step = self.queue.pop(0)
        if step.say:
            self.session.spoke(step.say, "llm")
        for call in step.calls:
            await self._call(action, call.name, call.args)
        if step.calls:
            await self.driver.inference(self, "", first_turn=False, speculative=False)

    async def _call(self, action: Action, name: str, args: dict[str, Any]) -> None:
        session = self.session
        if name in session.agent.llm_tools:
            await session.agent_tool_call(name, args)
        elif name in action.visible_tools:
            session.tool_call(name, args)
        else:
            session.turn.llm_calls.append(RecordedCall(name, dict(args), "refused"))

    async def speak(self, text: str) -> None:
        return None

    async def deliver(self, action: Action) -> None:
        self.session.take_payloads(action)
        self.session.take_status()

    def record(self, call: ToolCall, done: RecordedCall) -> None:
        return None

    async def end(self) -> None:
        return None  # the session records that it ended; there is no call to hang up


class DirectPlayer(ScenarioPlayer):
    """Caller turns go straight to the driver; a ``_DirectHost`` plays the scripted model."""

    def __init__(
        self,
        session: StewardSession,
        clock: TurnClock,
        model: ModelPolicy | None,
        events: EventPublisher | None = None,
    ) -> None:
        self._session = session
        self.clock = clock
        self.driver = Driver(session)
        self.host = _DirectHost(self.driver, session, model)
        self.recorder = record_session(session, events) if events is not None else None
        if self.recorder is not None:
            self.recorder.sync()  # after the restore: a resumed call continues its turn count

    @property
    def session(self) -> StewardSession:
        return self._session

    async def play(self, turn: ScenarioTurn) -> None:
        self.host.queue = list(turn.llm)
        self.host.turn = turn
        first = not any(u for t in self.session.turns for u in t.bot)
        await self.driver.inference(self.host, turn.user, first_turn=first, speculative=False)

    def turn_ended(self, number: int) -> None:
        if self.recorder is not None:
            self.recorder.end_turn(number)


def _session(agent: Agent, clock: TurnClock, options: dict[str, Any]) -> StewardSession:
    if "intents" in agent.raw:
        return TransactionSession(agent, clock=clock, **options)
    return StewardSession(agent, **options)


async def run_scenario_direct(
    agent: Agent | str | Path,
    scenario: Scenario,
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
    loaded, clock, options = scenario_setup(agent, scenario)
    session = _session(loaded, clock, {**options, "checkpointer": checkpointer})
    if on_conflict is not None:
        session.conflict_listeners.append(on_conflict)
    await session.restore()
    return await play_scenario(DirectPlayer(session, clock, model, events), scenario, on_turn)
