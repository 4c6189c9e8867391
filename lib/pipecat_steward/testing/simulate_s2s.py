"""Run an agent's scenario through a REAL speech-to-speech pipeline on the OpenAI Realtime fake.

Pipecat's ``OpenAIRealtimeLLMService`` talks to ``RealtimeServer`` over a local websocket; the
steward is a ``StewardS2S``. Each caller turn enters as the fake's input-audio transcription,
as the provider would report the caller's speech. The fake model makes the tool calls the
scenario lists for the turn and says the turn's text; when the turn gives no text it says the
latest steer it received (from the last note, or from the last tool result's ``next``), as an
obedient model would. The session is configured so the provider does not answer by itself
(``SemanticTurnDetection(create_response=False)``): the steward asks for each reply after its
directive went in. Traces have the shape of ``simulate.run_scenario``'s.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.pipecat.s2s import NOTE_PREFIX, Steer, StewardS2S, parse_steer
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.records import TurnRecord
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.player import ScenarioPlayer, play_scenario, scenario_setup
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioTurn,
    TurnClock,
    as_scenario,
    turn_record,
)
from pipecat_steward.testing.script import Say, Step
from pipecat_steward.testing.servers.openai_realtime import RealtimeServer
from pipecat_steward.testing.waiting import WaitBudget

__all__ = [
    "ObedientRealtimeModel",
    "RealtimePlayer",
    "RealtimeRun",
    "latest_steer",
    "realtime_run",
    "realtime_service",
    "run_scenario_s2s",
]

_SPARE_STEPS = 12


class ObedientRealtimeModel:
    """A scripted step source for ``RealtimeServer``: the turn's script, then the latest steer.

    Attributes:
        fake: The server whose received client events hold the notes and tool results.
        queue: The steps left in the current caller turn.

    """

    def __init__(self, fake: RealtimeServer) -> None:
        self.fake = fake
        self.queue: list[Step] = []

    def __call__(self, _event: Any) -> Step:
        if self.queue:
            return self.queue.pop(0)
        steer = latest_steer(self.fake)
        text = " ".join(t for t in (steer.say, steer.directive) if t)
        return Say(text) if text else ()

    def refill(self, steps: list[Step]) -> None:
        """Start a caller turn: its steps, and enough dynamic steps for the fake's script."""
        self.queue = steps
        self.fake.script = [self for _ in range(_SPARE_STEPS)]


def latest_steer(fake: RealtimeServer) -> Steer:
    """The last steer the client sent: a steward note, or a tool result's ``next``."""
    for event in reversed(fake.of_type("conversation.item.create")):
        item = event["item"]
        if item.get("type") == "function_call_output":
            return parse_steer(str(json.loads(item["output"]).get("next", "")))
        texts = [c.get("text", "") for c in item.get("content", []) if isinstance(c, dict)]
        notes = [t for t in texts if t.startswith(NOTE_PREFIX)]
        if notes:
            return parse_steer(notes[-1])
    return Steer()


def realtime_service(fake: RealtimeServer, prompt: str, **kwargs: Any) -> Any:
    """An ``OpenAIRealtimeLLMService`` on ``fake`` that leaves each reply to the steward."""
    from pipecat.services.openai.realtime import events
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    detection = events.SemanticTurnDetection(create_response=False)
    audio = events.AudioConfiguration(input=events.AudioInput(turn_detection=detection))
    props = events.SessionProperties(audio=audio)
    settings = OpenAIRealtimeLLMService.Settings(
        system_instruction=prompt, session_properties=props
    )
    return OpenAIRealtimeLLMService(api_key="test", base_url=fake.url, settings=settings, **kwargs)


@dataclass
class RealtimeRun:
    """A running S2S conversation: the steward, the fake provider, its model and the pipeline.

    Attributes:
        steward: The steward attached to the real ``OpenAIRealtimeLLMService``.
        fake: The OpenAI Realtime fake the service talks to.
        model: The obedient scripted model behind the fake.
        pipeline: The text-mode speech-to-speech pipeline.

    """

    steward: StewardS2S
    fake: RealtimeServer
    model: ObedientRealtimeModel
    pipeline: TextPipeline

    async def turn(self, user: str, steps: Sequence[Step] = ()) -> TurnRecord:
        """Play one caller turn: the fake hears ``user``; its model makes ``steps`` first."""
        self.model.refill(list(steps))
        since = len(self.steward.session.turns)
        await self.fake.user_says(user)
        if user.strip():
            await self._heard(since)
        await _settle(self.pipeline, self.steward, self.fake)
        return turn_record(self.steward.session, user, since)

    async def _heard(self, since: int, timeout: float = 5.0) -> None:
        """Wait until the steward took the caller's transcript in (a new turn record).

        ``timeout`` is a `WaitBudget`: a loaded machine stretches it.
        """
        budget = WaitBudget(timeout, "the steward hearing the caller")
        await budget.until(lambda: len(self.steward.session.turns) > since, 0.01)


@asynccontextmanager
async def realtime_run(
    agent: Agent, *, provider: RealtimeServer | None = None, **kwargs: Any
) -> AsyncIterator[RealtimeRun]:
    """Start a ``StewardS2S`` for ``agent`` on a real OpenAI Realtime service and its fake.

    Args:
        agent: The loaded agent.
        provider: The fake to run on (a new ``RealtimeServer`` when omitted), e.g. one with
            ``latency``; its script is the run's.
        **kwargs: Passed to ``StewardS2S`` (``rng``, ``event_data``, ``channel`` …).

    """
    steward = StewardS2S(agent, **kwargs)
    async with provider or RealtimeServer() as fake:
        model = ObedientRealtimeModel(fake)
        llm = realtime_service(fake, agent.prompt)
        steward.attach_s2s(llm)
        async with TextPipeline(
            llm,
            observers=steward.observers,
            speech_to_speech=True,
            provider_sync=fake.settler(llm),
        ) as pipe:
            await fake.wait_for(lambda e: e.get("type") == "session.update")
            await pipe.settle()
            yield RealtimeRun(steward, fake, model, pipe)


class RealtimePlayer(ScenarioPlayer):
    """Caller turns reach a ``StewardS2S`` as the Realtime fake's input transcriptions."""

    def __init__(self, run: RealtimeRun, clock: TurnClock | None = None) -> None:
        self.run = run
        self.clock = clock

    @property
    def session(self) -> StewardSession:
        return self.run.steward.session

    async def play(self, turn: ScenarioTurn) -> None:
        await self.run.turn(turn.user, self.steps(turn))

    def turn_ended(self, number: int) -> None:
        self.run.steward.events.end_turn(number)


async def run_scenario_s2s(
    agent: Agent | str | Path,
    scenario: Scenario | str | Path,
    *,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
    checkpointer: Checkpointer | None = None,
    events: EventPublisher | None = None,
    provider: RealtimeServer | None = None,
) -> list[dict[str, Any]]:
    """Play ``scenario`` through a real S2S pipeline; return one trace dict per caller turn.

    With a ``checkpointer`` the session is restored by identity first and completed turns are
    skipped; the steward saves at every turn boundary by itself. ``events`` receives the call's
    conversation events; ``provider`` is the fake to run on (see ``realtime_run``).
    """
    scenario = as_scenario(scenario)  # a scenario file's path, too
    loaded, clock, options = scenario_setup(agent, scenario)
    async with realtime_run(
        loaded,
        provider=provider,
        clock=clock,
        checkpointer=checkpointer,
        events=events,
        **options,
    ) as run:
        await run.steward.start()
        return await play_scenario(RealtimePlayer(run, clock), scenario, on_turn)


async def _settle(pipe: TextPipeline, steward: StewardS2S, fake: RealtimeServer) -> None:
    """Wait until the pipeline, the fake, the steward and its events are all done."""
    while True:
        await steward.idle()
        await pipe.settle()
        mark = (pipe.activity.moves, len(fake.received))
        await steward.relay.bus.drain()
        if not steward.busy and mark == (pipe.activity.moves, len(fake.received)):
            return
