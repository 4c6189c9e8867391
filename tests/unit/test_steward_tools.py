"""The tool set an inference is given: exactly the offered tools, the same on every asking,
and left in place only while it is still that set."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.processors.aggregators.llm_context import LLMContext

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


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("offer"), st.integers(0, 7)),
        st.tuples(st.just("extra"), st.integers(0, 2)),
        st.tuples(st.just("conflict"), st.booleans()),
        st.tuples(st.just("replaced"), st.just(0)),
        st.tuples(st.just("changed in place"), st.just(0)),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_after_every_offer_the_context_holds_exactly_the_tool_set_of_that_offer(
    ops: list[tuple[str, Any]],
) -> None:
    """An unchanged offer is left in place, and only then: whatever happened to the context's
    tools, the app's extra tools or the call since, the context offers ``tools_for``'s set."""
    session = StewardSession(load_agent(BOTS / "bella_notte"))
    tools = StewardTools(session)
    own = list(tools.schemas)
    context = LLMContext()
    extras = [FunctionSchema(f"app_{n}", "An app tool.", {}, []) for n in range(2)]
    for op, arg in ops:
        if op == "offer":
            visible = frozenset(own[i] for i in range(len(own)) if arg >> i & 1)
            tools.offer(context, visible)
            given_now = context.tools  # an empty set is no tools at all (NOT_GIVEN)
            names = [s.name for s in given_now.standard_tools] if given_now else []
            assert names == [s.name for s in tools.tools_for(visible).standard_tools]
        elif op == "extra":
            tools.extra = extras[:arg]
        elif op == "conflict":
            session.conflict = {"type": "steward_conflict"} if arg else None
        elif op == "replaced":
            context.set_tools(ToolsSchema(standard_tools=[extras[0]]))
        elif isinstance(context.tools, ToolsSchema):
            context.tools.standard_tools.append(extras[1])


def test_an_unchanged_offer_sets_nothing() -> None:
    session = StewardSession(load_agent(BOTS / "bella_notte"))
    tools = StewardTools(session)
    context, visible = LLMContext(), frozenset(tools.schemas)
    tools.offer(context, visible)
    first = context.tools
    tools.offer(context, visible)
    assert context.tools is first
