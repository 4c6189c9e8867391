"""A tool's stand-ins (a scenario's scripted backend, the chaos run's recorder and delay) take what
the real tool takes, so the argument check judges a call to the stand-in as it would the tool's.

A stand-in that took ``**kwargs`` opened the tool to any arguments: a chaos conversation then ran
unchecked calls that the same conversation resumed from a checkpoint refused.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from pipecat_steward.runtime.arguments import function_params
from pipecat_steward.testing.backend import scripted_backend
from pipecat_steward.testing.chaos import DELAY_KEY, PlayedConversation, surface_for
from pipecat_steward.testing.chaos import _delayed as delayed  # pyright: ignore[reportPrivateUsage]
from pipecat_steward.testing.chaos import _recorded as recorded  # pyright: ignore[reportPrivateUsage]
from pipecat_steward.testing.chaos_surface import chaos_agent
from pipecat_steward.testing.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
BOTS = ("bella_notte", "lead_capture", "order_desk", "clinic")


@pytest.mark.parametrize("bot", BOTS)
def test_a_scripted_backend_takes_what_the_tool_takes(bot: str) -> None:
    agent = chaos_agent(ROOT / "bots" / bot)
    scripted = scripted_backend(agent, {name: [{"ok": True}] for name in agent.tools})
    for name, fn in agent.tools.items():
        assert function_params(scripted.tools[name]) == function_params(fn), name


@pytest.mark.parametrize("bot", BOTS)
def test_executor_stand_ins_are_coroutines_and_validators_plain_functions(bot: str) -> None:
    # The runtime awaits an executor (a plain function runs in a thread) but calls a
    # validator directly: a coroutine there would be a bad result, not an answer.
    agent = chaos_agent(ROOT / "bots" / bot)
    scripted = scripted_backend(agent, {name: [{"ok": True}] for name in agent.tools})
    for name in agent.tools:
        is_executor = name in agent.flow.executors
        assert inspect.iscoroutinefunction(scripted.tools[name]) == is_executor, name


@pytest.mark.parametrize("bot", BOTS)
def test_the_chaos_recorder_and_delay_take_what_the_tool_takes(bot: str) -> None:
    agent = chaos_agent(ROOT / "bots" / bot)
    late = {name: [{DELAY_KEY: 0.0}] for name in agent.tools}
    scenario = Scenario(name="stand_ins", description="", backend=late, turns=[])
    wrapped = recorded(delayed(agent, scenario), surface_for(agent), PlayedConversation(scenario))
    for name, fn in agent.tools.items():
        assert function_params(wrapped.tools[name]) == function_params(fn), name
