"""The two-processor fallback drives the same engine as the hook, without touching the LLM."""

from __future__ import annotations

from tests.pipecat_support import messages_summary

# isort: split

from pathlib import Path

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.fallback import fallback_processors
from pipecat_steward.pipecat.tools import StewardTools
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing import Call, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.servers.chat_completions import tool_ordering_error

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"


async def test_before_and_after_processors_see_every_inference():
    agent = load_agent(BELLA)
    session = StewardSession(agent)
    tools = StewardTools(session)
    before, after = fallback_processors(session, tools, agent.prompt)
    llm = ScriptedLLM(
        [
            Say("Welcome!"),
            Call("set_reservation_basics", {"party_size": 4, "preferred_date": "2026-07-17"}),
            Say("Four on the 17th, right?"),
        ]
    )
    tools.register(llm)
    async with TextPipeline(llm, before_llm=[before], after_llm=[after]) as pipeline:
        for text in ("Hi", "Four on July 17th", "Yes"):
            await pipeline.say(text)
            await pipeline.settle()
    first, second, third = llm.inferences
    assert "Welcome to Bella Notte!" in (first.seen.system or "")
    assert (third.seen.direction, "<readback_protocol>" in (third.seen.system or "")) == (
        "upstream",
        True,
    )
    assert (
        "confirm_pending" not in third.visible_tools
        and "set_reservation_basics" not in third.visible_tools
    )
    assert len(llm.inferences) == 3, "the auto-confirmed turn made no inference"
    assert session.state.record("available_times").status == "filled"
    assert pipeline.spoken[-2:] == [
        "For 4 on that date we have 18:00, 19:30, 21:00.",
        "Which time works best?",
    ]
    assert tool_ordering_error(pipeline.context.get_messages()) is None
    assert messages_summary(pipeline.context.get_messages())[-1][1].startswith("For 4 on that date")
