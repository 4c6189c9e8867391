"""A loaded machine slows a scenario down but never changes its result.

With hundreds of calls in one process, or on a busy CI machine, every event loop iteration
takes longer. The harness's bounds (the pipeline's start, a turn's settling, the pipeline's end)
are counted in the waiter's own polls, so a slow call is not cut short; something that never
happens still fails. Here a hog blocks the loop for a while at every iteration, as many other
calls would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from pipecat.frames.frames import Frame, StartFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from pipecat_steward.testing import Say, ScriptedLLM, TextPipeline

HOG_S = 0.03  # the loop is blocked this long at each of its iterations


@asynccontextmanager
async def loaded_loop() -> AsyncIterator[None]:
    """Block the event loop for ``HOG_S`` at every iteration until the block ends."""

    async def hog() -> None:
        while True:
            time.sleep(HOG_S)  # the point: the loop can do nothing else meanwhile
            await asyncio.sleep(0)

    task = asyncio.create_task(hog())
    try:
        yield
    finally:
        task.cancel()


async def test_a_loaded_loop_stretches_the_bounds_of_start_settle_and_stop() -> None:
    llm = ScriptedLLM([Say("Table for two, noted."), Say("See you then.")])
    pipeline = TextPipeline(llm, turn_end_s=0.05)
    async with loaded_loop():
        started = time.monotonic()
        await pipeline.start()
        for text in ["a table for two", "that's all"]:
            await pipeline.say(text)
            await pipeline.settle(timeout=0.5)
        await pipeline.stop(timeout=0.5)
        took = time.monotonic() - started
    assert pipeline.spoken == ["Table for two, noted.", "See you then."]
    # The call took longer than every bound: a clock would have cut it short.
    assert took > 1.0


async def test_a_settle_that_never_comes_still_fails() -> None:
    llm = ScriptedLLM([Say("Hello.")])
    async with TextPipeline(llm) as pipeline:
        pipeline.activity.calls.add("never-answered")  # a function call that never ends
        with pytest.raises(TimeoutError, match="settling"):
            await pipeline.settle(timeout=0.2)
        pipeline.activity.calls.clear()


class _NeverStarts(FrameProcessor):
    """Holds the `StartFrame` forever: the pipeline never comes up."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, StartFrame):
            await asyncio.Event().wait()
        await self.push_frame(frame, direction)


async def test_a_start_that_fails_leaves_no_pipeline_running() -> None:
    before = asyncio.all_tasks()
    pipeline = TextPipeline(ScriptedLLM([]), before_llm=[_NeverStarts()])
    with pytest.raises(TimeoutError, match="start"):
        await pipeline.start(timeout=0.2)
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    assert left == []
