"""Run an agent's scenario through the REAL Pipecat pipeline in text mode.

Caller turns enter as transcripts; the LLM is a ``ScriptedLLM`` that makes the tool calls the
scenario lists for each turn and, when the turn's script runs out, relays the engine's
``<system_directive>`` (as an obedient model would); backend tools can be scripted too. Every
turn yields one trace dict (see ``docs/scenarios.md``).
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pipecat.observers.base_observer import BaseObserver

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.records import Call as Call_
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.scenario import (
    Scenario,
    ScenarioInference,
    ScenarioTurn,
    TurnClock,
    before_turn,
    check_expectations,
    load_scenario,
    resume_point,
    scripted_backend,
    trace_turn,
    turn_record,
)
from pipecat_steward.testing.script import Call, Say, Step
from pipecat_steward.testing.scripted_llm import ContextSnapshot, FunctionStep, ScriptedLLM

__all__ = [
    "Scenario",
    "ScenarioInference",
    "ScenarioTurn",
    "check_expectations",
    "load_scenario",
    "ScriptedModel",
    "run_scenario",
    "scenario_step",
    "trace_turn",
]

_DIRECTIVE = re.compile(r"<system_directive>\n(.*?)\n</system_directive>", re.S)
_SPARE_STEPS = 12


def _directive(snapshot: ContextSnapshot) -> str:
    match = _DIRECTIVE.search(snapshot.system or "")
    return match.group(1).strip() if match else ""


def scenario_step(inference: ScenarioInference) -> Step:
    """One scripted inference as a ScriptedLLM step (text first, then the calls)."""
    items: list[Say | Call] = [Say(inference.say)] if inference.say else []
    return [*items, *(Call(c.name, c.args) for c in inference.calls)]


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
    scenario: Scenario,
    *,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
    checkpointer: Checkpointer | None = None,
    observers: Sequence[BaseObserver] = (),
    verbose: bool = False,
) -> list[dict[str, Any]]:
    """Play ``scenario`` through a real pipeline; return one trace dict per caller turn.

    With a ``checkpointer`` the session is restored by identity first and the turns already
    completed are skipped, so a killed run can be resumed by running it again. ``observers``
    watch the pipeline beside the steward's own (a benchmark's timers, say). Pipecat's own
    log output (every frame at DEBUG) is off for the run unless ``verbose``.
    """
    with _pipecat_logs(verbose):
        return await _run(agent, scenario, on_turn, checkpointer, observers)


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


async def _run(
    agent: Agent | str | Path,
    scenario: Scenario,
    on_turn: Callable[[dict[str, Any]], None] | None,
    checkpointer: Checkpointer | None,
    observers: Sequence[BaseObserver] = (),
) -> list[dict[str, Any]]:
    loaded = agent if isinstance(agent, Agent) else load_agent(agent)
    loaded = scripted_backend(loaded, scenario.backend)
    clock = TurnClock()
    steward = Steward(
        loaded,
        rng=random.Random(scenario.seed),
        event_data=scenario.event_data,
        channel=scenario.channel,
        gate_timeout_s=scenario.gate_timeout_s,
        task_timeout_s=scenario.task_timeout_s,
        checkpointer=checkpointer,
        clock=clock,
    )
    await steward.start()
    model = ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(_SPARE_STEPS)], admit_hidden=True)
    steward.attach(llm)
    traces: list[dict[str, Any]] = []
    async with TextPipeline(llm, observers=[*steward.observers, *observers]) as pipeline:
        done = resume_point(steward.session, scenario)
        for number, turn in enumerate(scenario.turns, 1):
            if number <= done:
                continue
            clock.turn = number
            before_turn(steward.session, turn)
            model.queue = [scenario_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(_SPARE_STEPS - llm.remaining))
            seen = len(llm.inferences)
            since = len(steward.session.turns)
            await pipeline.say(turn.user)
            await _settle(pipeline, steward)
            _record_refusals(steward, llm, seen)
            steward.session.turns_done = number
            await steward.session.save()
            trace = trace_turn(number, steward.session, turn_record(steward.session, turn.user, since))
            traces.append(trace)
            if on_turn:
                on_turn(trace)
    return traces


async def _settle(pipeline: TextPipeline, steward: Steward) -> None:
    """Wait until the pipeline is quiet and no engine call (a slow executor) is still running."""
    await pipeline.settle()
    while steward.hook is not None and steward.hook.driver.inflight:
        await steward.hook.driver.settle()
        await pipeline.settle()
    await steward.relay.bus.drain()


def _record_refusals(steward: Steward, llm: ScriptedLLM, since: int) -> None:
    """Trace the calls the scripted model refused because the tool was not visible.

    They never reach the steward, as a real model could not make them at all.
    """
    record = steward.session.turn
    for inference in llm.inferences[since:]:
        for call in inference.calls:
            if call.outcome == "refused":
                record.llm_calls.append(Call_(call.name, dict(call.args), "refused"))
