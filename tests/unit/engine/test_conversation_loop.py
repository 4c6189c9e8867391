"""The synchronous conversation host: one loop per thread, and an async twin for async code."""

from __future__ import annotations

import asyncio

import pytest

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.runtime.conversation import Conversation

from .flows import TOY


def test_sync_turns_share_one_loop_and_match_the_async_twin() -> None:
    sync, asynchronous = Conversation(compile_flow(TOY)), Conversation(compile_flow(TOY))
    first = [sync.turn(text).bot for text in ("Hi", "four people")]

    async def play() -> list[object]:
        return [(await asynchronous.aturn(text)).bot for text in ("Hi", "four people")]

    assert asyncio.run(play()) == first


def test_a_sync_turn_inside_a_running_loop_names_the_async_call() -> None:
    async def misuse() -> None:
        Conversation(compile_flow(TOY)).turn("Hi")

    with pytest.raises(RuntimeError, match="await aturn"):
        asyncio.run(misuse())
