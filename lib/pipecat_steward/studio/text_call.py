"""``--text``: chat with the agent in the browser through the real pipeline, no speech keys.

The caller's typed line enters the project's text pipeline (user aggregator → the agent's
steward-hooked LLM → a text TTS → an output transport → assistant aggregator) as a final
transcript, exactly as an STT would push it. The LLM is any OpenAI-compatible endpoint
(``STEWARD_LLM_BASE_URL``, ``STEWARD_LLM_MODEL``, else OpenAI with ``OPENAI_API_KEY``); the
monitor and the extractor are attached as in production when the agent has a logic_slm.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipecat_steward.events.hub import EventHub
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.studio.live import VariableWatch

__all__ = ["TextCall"]


class TextCall:
    """One text conversation with the agent; ``say`` a line, its events go to ``hub``."""

    def __init__(
        self,
        agent_dir: Path,
        hub: EventHub,
        session: str,
        env: Mapping[str, str] | None = None,
        turn_timeout: float = 300.0,
    ) -> None:
        self.agent_dir = agent_dir
        self.hub = hub
        self.session = session
        self.publisher: EventPublisher | None = None
        self.env = dict(os.environ if env is None else env)
        self._lock = asyncio.Lock()
        self._pipeline: Any = None
        self._steward: Any = None
        self._variables: VariableWatch | None = None
        self._opening: asyncio.Task[None] | None = None
        self.turn_timeout = turn_timeout
        """Seconds a turn may take (a self-hosted model on a CPU can be slow) before it fails."""

    async def start(self) -> None:
        """Build and start the pipeline; the engine opens the call in the background.

        The page is served meanwhile: a slow model must not hold the studio's startup, and the
        caller's first line waits for the opening to finish.
        """
        from pipecat.frames.frames import LLMRunFrame

        from pipecat_steward.cli.rehearse import llm_service
        from pipecat_steward.pipecat.steward import Steward
        from pipecat_steward.pipecat.supervise import attach_supervision
        from pipecat_steward.testing.pipeline import TextPipeline

        llm = llm_service(self.env)
        self.publisher = await self.hub.open(self.session)
        steward = Steward.from_folder(
            self.agent_dir, supervise=False, call_id=self.session, events=self.publisher
        )
        steward.attach(llm)
        attach_supervision(steward, llm, env=self.env)  # as in production, with this env
        await steward.start()
        self._steward = steward
        self._variables = VariableWatch(steward, self.publisher).attach()
        self._pipeline = TextPipeline(llm, observers=steward.observers)
        await self._pipeline.__aenter__()
        self._opening = asyncio.ensure_future(self._turn(LLMRunFrame()))
        self._opening.add_done_callback(_report)

    async def _turn(self, frame: Any) -> None:
        async with self._lock:
            await self._pipeline.worker.queue_frames([frame])
            await self._settle()

    async def say(self, text: str) -> None:
        """Say ``text`` as the caller and wait until the bot is done answering.

        Raises:
            TimeoutError: The bot was not done within ``turn_timeout`` seconds.
        """
        async with self._lock:
            await self._pipeline.say(text)
            await self._settle()

    async def _settle(self) -> None:
        steward = self._steward
        await self._pipeline.settle(timeout=self.turn_timeout)
        while steward.hook is not None and steward.hook.driver.inflight:
            await steward.hook.driver.settle()
            await self._pipeline.settle(timeout=self.turn_timeout)
        await steward.relay.bus.drain()
        for part in (steward.monitor, steward.extractor):
            if part is not None:
                await part.drain()
        await steward.session.save()
        assert self._variables is not None
        self._variables.sync()
        steward.events.end_turn()

    async def stop(self) -> None:
        """End the call: its events first, then the pipeline and the supervision.

        The store gets ``call_ended`` even when the pipeline is slow to stop.
        """
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
        if self._steward is not None:
            await self._steward.events.aclose("ended", "the studio stopped")
        if self.publisher is not None:  # its own publisher, also when no steward was made
            await self.publisher.aclose("ended", "the studio stopped")
        if self._pipeline is not None:
            await self._pipeline.stop()
        if self._steward is not None and self._steward.supervision is not None:
            await self._steward.supervision.aclose()


def _report(task: asyncio.Task[None]) -> None:
    """Log an opening turn that failed (nobody awaits it)."""
    if not task.cancelled() and task.exception() is not None:
        from loguru import logger

        logger.error(f"steward studio: the opening turn failed: {task.exception()!r}")
