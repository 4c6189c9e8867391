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
def test_only_a_validator_s_stand_in_is_a_plain_function(bot: str) -> None:
    # The runtime calls a setter's validator directly (a coroutine there would be a bad
    # result) and awaits every other tool, running a plain function in a thread: a canned
    # answer needs no thread hop.
    agent = chaos_agent(ROOT / "bots" / bot)
    scripted = scripted_backend(agent, {name: [{"ok": True}] for name in agent.tools})
    for name in agent.tools:
        is_validator = name in agent.validators
        assert inspect.iscoroutinefunction(scripted.tools[name]) != is_validator, name


@pytest.mark.parametrize(
    ("bot", "awaited", "validators"),
    [
        (
            "bella_notte",
            {"find_available_times", "book_reservation", "end_session"},
            {"set_reservation_basics", "set_contact_phone"},
        ),
        ("lead_capture", {"hand_over"}, {"set_email", "set_budget_band"}),
        (
            "order_desk",
            {"check_cancellable", "cancel_order", "track_order"},
            {"set_order_id", "set_amount"},
        ),
        ("clinic", {"find_patient", "collect_payment"}, set()),
    ],
)
def test_validators_are_the_setters_of_either_engine(
    bot: str, awaited: set[str], validators: set[str]
) -> None:
    # A transaction's checks and executors are awaited like a flow's executors: their
    # stand-ins must not be plain functions the runtime sends to a thread.
    agent = chaos_agent(ROOT / "bots" / bot)
    assert validators <= agent.validators
    assert not awaited & agent.validators
    scripted = scripted_backend(agent, {name: [{"ok": True}] for name in awaited})
    assert all(inspect.iscoroutinefunction(scripted.tools[name]) for name in awaited)


@pytest.mark.parametrize("bot", BOTS)
def test_the_chaos_recorder_and_delay_take_what_the_tool_takes(bot: str) -> None:
    agent = chaos_agent(ROOT / "bots" / bot)
    late = {name: [{DELAY_KEY: 0.0}] for name in agent.tools}
    scenario = Scenario(name="stand_ins", description="", backend=late, turns=[])
    wrapped = recorded(delayed(agent, scenario), surface_for(agent), PlayedConversation(scenario))
    for name, fn in agent.tools.items():
        assert function_params(wrapped.tools[name]) == function_params(fn), name
