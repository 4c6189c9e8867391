"""Whatever takes an agent takes a loaded ``Agent`` or its folder's path, and nothing else.

``Steward("bots/bella_notte")`` and ``open_session(path)`` stopped on ``AttributeError: 'str'
object has no attribute 'engine'`` while the scenario players took a folder. One helper,
``as_agent``, now gives every host the same answer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.testing.chaos_surface import chaos_agent
from pipecat_steward.testing.player import scenario_setup
from pipecat_steward.testing.scenario import load_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIO = load_scenario(BOTS / "bella_notte" / "scenarios" / "happy_path.yaml")

HOSTS: dict[str, Callable[[Any], Agent]] = {
    "Steward": lambda agent: Steward(agent).agent,
    "StewardS2S": lambda agent: StewardS2S(agent).agent,
    "open_session": lambda agent: open_session(agent).agent,
    "a scenario player's setup": lambda agent: scenario_setup(agent, SCENARIO)[0],
    "chaos_agent": chaos_agent,
}


@pytest.mark.parametrize("host", list(HOSTS))
@pytest.mark.parametrize("bot", ["bella_notte", "order_desk"])  # a slot and a transaction agent
@pytest.mark.parametrize("given", ["str", "Path", "Agent"])
def test_an_agent_or_its_folder_gives_the_same_agent(host: str, bot: str, given: str) -> None:
    folder = BOTS / bot
    agent = {"str": str(folder), "Path": folder, "Agent": load_agent(folder)}[given]
    got = HOSTS[host](agent)
    assert isinstance(got, Agent)
    assert (got.name, got.engine) == (load_agent(folder).name, load_agent(folder).engine)


REFUSED: dict[str, tuple[Any, type[Exception], str]] = {
    "None": (None, TypeError, "a loaded Agent or its folder's path, not NoneType"),
    "a number": (5, TypeError, "not int"),
    "a mapping": ({"name": "x"}, TypeError, "not dict"),
    "a missing folder": (BOTS / "nope", ConfigError, "no agent.yaml here"),
    "the agent.yaml": (BOTS / "bella_notte" / "agent.yaml", ConfigError, "is a file"),
}


@pytest.mark.parametrize("host", list(HOSTS))
@pytest.mark.parametrize("case", list(REFUSED))
def test_what_is_no_agent_is_refused_by_every_host(host: str, case: str) -> None:
    agent, error, words = REFUSED[case]
    with pytest.raises(error, match=words):
        HOSTS[host](agent)
