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
from pipecat_steward.studio.live import LiveTrace, SLMCallSink

__all__ = ["TextCall"]


class TextCall:
    """One text conversation with the agent; ``say`` a line, its events go to ``hub``."""

    def __init__(
        self, agent_dir: Path, hub: EventHub, session: str, env: Mapping[str, str] | None = None
    ) -> None:
        self.agent_dir = agent_dir
        self.hub = hub
        self.session = session
        self.publisher: EventPublisher | None = None
        self.env = dict(os.environ if env is None else env)
        self._lock = asyncio.Lock()
        self._pipeline: Any = None
        self._steward: Any = None
        self._live: LiveTrace | None = None

    async def start(self) -> None:
        """Build and start the pipeline, then let the engine open the call."""
        from pipecat.frames.frames import LLMRunFrame

        from pipecat_steward.cli.rehearse import llm_service
        from pipecat_steward.pipecat.steward import Steward
        from pipecat_steward.testing.pipeline import TextPipeline

        llm = llm_service(self.env)
        steward = Steward.from_folder(self.agent_dir, supervise=False, call_id=self.session)
        steward.attach(llm)
        self._supervise(steward, llm)
        await steward.start()
        self._steward = steward
        self.publisher = await self.hub.open(self.session, redact=steward.session.secrets.redact)
        self.publisher.start(str(steward.agent.raw.get("name") or self.agent_dir.name), "text")
        self._live = LiveTrace(steward, self.publisher)
        self._pipeline = TextPipeline(llm, observers=steward.observers)
        await self._pipeline.__aenter__()
        async with self._lock:
            await self._pipeline.worker.queue_frames([LLMRunFrame()])
            await self._settle()

    def _supervise(self, steward: Any, llm: Any) -> None:
        from pipecat_steward.pipecat.supervise import attach_supervision
        from pipecat_steward.slm import SLMClient
        from pipecat_steward.slm.manifests import load_price_book
        from pipecat_steward.storage.ledger import default_ledger

        try:
            book = load_price_book()
        except Exception:  # an unreadable price book only loses the cost column
            book = None
        sink = SLMCallSink(default_ledger(), lambda: self.publisher, book)
        attach_supervision(steward, llm, client=SLMClient(ledger=sink), env=self.env)

    async def say(self, text: str) -> None:
        """Say ``text`` as the caller and wait until the bot is done answering."""
        async with self._lock:
            if self.publisher is not None:  # what the caller's words set off is their turn's
                self.publisher.turn = len(self._steward.session.turns) + 1
            await self._pipeline.say(text)
            await self._settle()

    async def _settle(self) -> None:
        steward = self._steward
        await self._pipeline.settle()
        while steward.hook is not None and steward.hook.driver.inflight:
            await steward.hook.driver.settle()
            await self._pipeline.settle()
        await steward.relay.bus.drain()
        for part in (steward.monitor, steward.extractor):
            if part is not None:
                await part.drain()
        await steward.session.save()
        assert self._live is not None
        self._live.flush()

    async def stop(self) -> None:
        """End the pipeline and the supervision."""
        if self._pipeline is not None:
            await self._pipeline.stop()
        if self._steward is not None and self._steward.supervision is not None:
            await self._steward.supervision.aclose()
        await self.hub.close(self.session, status="ended", reason="studio stopped")
