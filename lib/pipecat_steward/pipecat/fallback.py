"""The two-processor fallback, for apps that cannot wrap their LLM service.

``StewardBefore`` sits between the user aggregator and the LLM and sees the first inference of
each caller turn (downstream); ``StewardAfter`` sits right after the LLM and sees the
re-inference after a tool result, which the assistant aggregator pushes upstream and which
never reaches a processor before the LLM. Both share one
hook. The instruction suffix travels as an ``LLMUpdateSettingsFrame`` pushed in the frame's
direction just ahead of it, which the service applies as pipecat's full settings update (it logs
each one and marks itself usable again; an attached steward sets only the instruction, see
``pipecat_steward.pipecat.instruction``). Limitation: a context frame that a third processor
pushes between these two and the LLM bypasses the steward — prefer ``Steward.attach``.
"""

from __future__ import annotations

from pipecat.frames.frames import Frame, LLMContextFrame, LLMUpdateSettingsFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.settings import LLMSettings

from pipecat_steward.pipecat.hook import StewardHook
from pipecat_steward.pipecat.tools import StewardTools
from pipecat_steward.runtime.session import StewardSession

__all__ = ["StewardAfter", "StewardBefore", "fallback_processors"]


class _HookedProcessor(FrameProcessor):
    """Runs the shared hook on context frames travelling in one direction."""

    direction: FrameDirection = FrameDirection.DOWNSTREAM

    def __init__(
        self, session: StewardSession, tools: StewardTools, base_prompt: str, **kwargs: object
    ) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportArgumentType]
        self.hook = StewardHook(session, tools, self, base_prompt, apply_system=self.push_system)
        self._direction = self.direction

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame) and direction == self.direction:
            self._direction = direction
            await self.hook.on_context(frame, direction, self.push_frame)
        else:
            await self.push_frame(frame, direction)

    async def push_system(self, system: str) -> None:
        """Send the instruction to the LLM as a settings frame travelling with the request."""
        frame = LLMUpdateSettingsFrame(delta=LLMSettings(system_instruction=system))
        await self.push_frame(frame, self._direction)


class StewardBefore(_HookedProcessor):
    """Place between the user aggregator and the LLM."""

    direction = FrameDirection.DOWNSTREAM


class StewardAfter(_HookedProcessor):
    """Place right after the LLM."""

    direction = FrameDirection.UPSTREAM


def fallback_processors(
    session: StewardSession, tools: StewardTools, base_prompt: str
) -> tuple[StewardBefore, StewardAfter]:
    """Build the pair; both share ``session`` (and so one engine state)."""
    before = StewardBefore(session, tools, base_prompt, name="steward.before")
    after = StewardAfter(session, tools, base_prompt, name="steward.after")
    after.hook = before.hook.with_emitter(after, after.push_system)
    return before, after
