"""Run an agent's scenario through the REAL Pipecat pipeline in text mode.

Caller turns enter as transcripts; the LLM is a ``ScriptedLLM`` that makes the tool calls the
scenario lists for each turn and, when the turn's script runs out, relays the engine's
``<system_directive>`` (as an obedient model would); backend tools can be scripted too. Every
turn yields one trace dict (see ``docs/scenarios.md``); the turns are walked by the one
scenario loop (``player.py``) with a ``PipelinePlayer``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self

from pipecat.observers.base_observer import BaseObserver

from pipecat_steward.agent.loader import Agent
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.player import (
    ScenarioPlayer,
    play_scenario,
    scenario_setup,
    scenario_step,
)
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioInference,
    ScenarioTurn,
    TurnClock,
    as_scenario,
    check_expectations,
    load_scenario,
    trace_turn,
)
from pipecat_steward.testing.script import Say, Step
from pipecat_steward.testing.scripted_llm import ContextSnapshot, FunctionStep, ScriptedLLM

__all__ = [
    "PipelinePlayer",
    "Scenario",
    "ScenarioInference",
    "ScenarioTurn",
    "check_expectations",
    "load_scenario",
    "ScriptedModel",
    "run_scenario",
    "scenario_step",
    "settle",
    "trace_turn",
]

_DIRECTIVE = re.compile(r"<system_directive>\n(.*?)\n</system_directive>", re.S)
_SPARE_STEPS = 12


def _directive(snapshot: ContextSnapshot) -> str:
    match = _DIRECTIVE.search(snapshot.system or "")
    return match.group(1).strip() if match else ""


class ScriptedModel:
    """The per-turn script queue behind the ScriptedLLM."""

    def __init__(self) -> None:
        self.queue: list[Step] = []

    def __call__(self, snapshot: ContextSnapshot) -> Step:
        if self.queue:
            return self.queue.pop(0)
        text = _directive(snapshot)
        return Say(text) if text else ()


async def run_scenario(
    agent: Agent | str | Path,
    scenario: Scenario | str | Path,
    *,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
    checkpointer: Checkpointer | None = None,
    observers: Sequence[BaseObserver] = (),
    verbose: bool = False,
    events: EventPublisher | None = None,
) -> list[dict[str, Any]]:
    """Play ``scenario`` through a real pipeline; return one trace dict per caller turn.

    With a ``checkpointer`` the session is restored by identity first and the turns already
    completed are skipped, so a killed run can be resumed by running it again. ``observers``
    watch the pipeline beside the steward's own (a benchmark's timers, say). Pipecat's own
    log output (every frame at DEBUG) is off for the run unless ``verbose``. ``events`` receives
    the call's conversation events (the traces are the same events, see ``traces_from_events``).
    """
    scenario = as_scenario(scenario)  # a scenario file's path, too
    with _pipecat_logs(verbose):
        player = await PipelinePlayer.start(
            agent, scenario, checkpointer=checkpointer, events=events
        )
        async with player.running(observers):
            return await play_scenario(player, scenario, on_turn)


@contextlib.contextmanager
def _pipecat_logs(verbose: bool) -> Iterator[None]:
    if verbose:
        yield
        return
    from loguru import logger

    logger.disable("pipecat")
    try:
        yield
    finally:
        logger.enable("pipecat")


class PipelinePlayer(ScenarioPlayer):
    """Caller turns enter a real pipeline as transcripts; a ``ScriptedLLM`` plays the model.

    Attributes:
        steward: The steward attached to the scripted LLM.
        llm: The scripted LLM service: the turn's script, then the engine's directive.
        model: The per-turn script queue behind ``llm``.
        pipeline: The running text-mode pipeline (set by ``running``).
    """

    def __init__(self, steward: Steward, clock: TurnClock | None = None) -> None:
        """Attach a scripted LLM to a started ``steward``."""
        self.steward = steward
        self.clock = clock
        self.model = ScriptedModel()
        self.llm = ScriptedLLM(
            [FunctionStep(self.model) for _ in range(_SPARE_STEPS)], admit_hidden=True
        )
        steward.attach(self.llm)
        self.pipeline: TextPipeline | None = None

    @classmethod
    async def start(cls, agent: Agent | str | Path, scenario: Scenario, **options: Any) -> Self:
        """A started steward for ``agent`` set up as ``scenario`` says, with its player.

        Args:
            agent: The agent (or its folder); the scenario's scripted backend replaces tools.
            scenario: Gives the seed, event data, channel and timeouts.
            **options: More ``Steward`` options (a ``checkpointer`` …).
        """
        loaded, clock, settings = scenario_setup(agent, scenario)
        steward = Steward(loaded, clock=clock, **settings, **options)
        await steward.start()
        return cls(steward, clock)

    @property
    def session(self) -> StewardSession:
        return self.steward.session

    @contextlib.asynccontextmanager
    async def running(
        self, observers: Sequence[BaseObserver] = (), *, rtvi: bool = False
    ) -> AsyncIterator[Self]:
        """Run the pipeline around the scripted LLM while the scenario plays.

        Args:
            observers: More observers of the pipeline.
            rtvi: With pipecat's RTVI processor and observer (see ``TextPipeline``).
        """
        watchers = [*self.steward.observers, *observers]
        async with TextPipeline(self.llm, observers=watchers, rtvi=rtvi) as pipeline:
            self.pipeline = pipeline
            yield self

    async def play(self, turn: ScenarioTurn) -> None:
        assert self.pipeline is not None, "play inside running()"
        self.model.queue = self.steps(turn)
        self.llm.extend(FunctionStep(self.model) for _ in range(_SPARE_STEPS - self.llm.remaining))
        await self.pipeline.say(turn.user)
        await self.settle()

    def turn_ended(self, number: int) -> None:
        self.steward.events.end_turn(number)

    async def settle(self) -> None:
        """Wait until the turn is done (see ``settle``)."""
        assert self.pipeline is not None
        await settle(self.pipeline, self.steward)


async def settle(pipeline: TextPipeline, steward: Steward) -> None:
    """Wait until the pipeline is quiet and no engine call (a slow executor) is still running."""
    await pipeline.settle()
    hook = steward.hook
    while hook is not None and hook.driver.inflight:
        await hook.driver.settle()
        await pipeline.settle()
    await steward.relay.bus.drain()
