"""The tool set an inference is given: exactly the offered tools, the same on every asking."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.tools import StewardTools
from pipecat_steward.runtime.session import StewardSession

BOTS = Path(__file__).resolve().parents[2] / "bots"


def _names(tools: StewardTools, visible: frozenset[str]) -> list[str]:
    return [schema.name for schema in tools.tools_for(visible).standard_tools]


@pytest.mark.parametrize("bot", sorted(p.name for p in BOTS.iterdir() if p.is_dir()))
def test_each_visible_set_gives_the_offered_tools_in_schema_order_every_time(bot: str) -> None:
    agent = load_agent(BOTS / bot)
    session = StewardSession(agent)
    tools = StewardTools(session)
    every = [*tools.schemas, *tools.agent_schemas]
    own = list(tools.schemas)
    sets = [frozenset(c) for n in range(3) for c in itertools.combinations(own, n)]
    for visible in [*sets, frozenset(own), *reversed(sets)]:  # each set asked again later
        expected = [name for name in every if name in visible or name in agent.llm_tools]
        assert _names(tools, visible) == expected
        assert _names(StewardTools(session), visible) == expected  # a tool set asked first


def test_a_returned_tool_list_is_the_callers_own() -> None:
    session = StewardSession(load_agent(BOTS / "bella_notte"))
    tools = StewardTools(session)
    visible = frozenset(tools.schemas)
    first = tools.tools_for(visible)
    first.standard_tools.clear()
    assert len(tools.tools_for(visible).standard_tools) == len(tools.schemas) + len(
        tools.agent_schemas
    )


def test_no_tool_is_offered_once_another_worker_took_the_call() -> None:
    session = StewardSession(load_agent(BOTS / "bella_notte"))
    tools = StewardTools(session)
    visible = frozenset(tools.schemas)
    assert _names(tools, visible)
    session.conflict = {"type": "steward_conflict"}
    assert _names(tools, visible) == []
