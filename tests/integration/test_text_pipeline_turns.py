"""Every transcript said to a `TextPipeline` reaches the caller's turn, however fast they come.

A transcript that opens a turn makes the user aggregator interrupt, and an interruption
flushes the frames queued behind it. Said back to back, a turn's later transcripts were queued
there and lost: the model heard only the first part.
"""

from __future__ import annotations

import asyncio

import pytest
from tests.pipecat_support import messages_summary

# isort: split

from pipecat_steward.testing import Say, ScriptedLLM, TextPipeline

PARTS = [
    ["A table for 4", "on July 17th"],
    ["My name is Ana", "Ana Lopez", "with one L"],
    ["yes", "", "that's right"],
]


@pytest.mark.parametrize("turn_end_s", [0.0, 0.05, 0.25])
@pytest.mark.parametrize("parts", PARTS)
async def test_a_turn_said_as_several_transcripts_back_to_back_arrives_whole(
    parts: list[str], turn_end_s: float
) -> None:
    llm = ScriptedLLM([Say("Noted.") for _ in parts])
    async with TextPipeline(llm, turn_end_s=turn_end_s) as pipeline:
        for text in parts:
            await pipeline.say(text)
        await pipeline.settle()
    said = [m for role, m in messages_summary(pipeline.context.get_messages()) if role == "user"]
    assert " ".join(said) == " ".join(p for p in parts if p)


async def test_a_barge_in_said_as_two_transcripts_arrives_whole() -> None:
    """The caller talks over the bot: the interruption stops the bot, not the caller's words."""
    menu = "Let me read you our whole menu, starting with the antipasti."
    llm = ScriptedLLM([Say(menu), Say("Sure.")])
    async with TextPipeline(llm, secs_per_word=0.2) as pipeline:
        await pipeline.say("what do you have")
        async with asyncio.timeout(5):
            while not pipeline.bot_speaking:
                await asyncio.sleep(0.01)
        for text in ["sorry, stop", "I only want the wine list"]:
            await pipeline.say(text)
        await pipeline.settle()
    said = [m for role, m in messages_summary(pipeline.context.get_messages()) if role == "user"]
    assert said[-1] == "sorry, stop I only want the wine list"
