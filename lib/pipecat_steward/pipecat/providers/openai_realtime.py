"""OpenAI Realtime (``OpenAIRealtimeLLMService``): the fullest speech-to-speech channel set.

- ``session.update`` carries the instructions and the tools, so the visible tool set and the
  phase instruction follow the engine (an ``LLMUpdateSettingsFrame`` whose delta replaces
  both; before the session starts, the tools go into the session properties).
- Every appended non-assistant message becomes a ``system`` item: notes are silent unless a
  response is asked for (``response.create``).
- With semantic turn detection and ``create_response=False`` the service does not answer the
  caller by itself: the steward must ask for each reply.
- With server VAD on, ``broadcast_interruption()`` only truncates; the server keeps
  generating until it gets ``response.cancel`` as well.
"""

from __future__ import annotations

from typing import Any

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import LLMUpdateSettingsFrame

from pipecat_steward.pipecat.providers.base import Channels, LLMKind, ProviderAdapter

__all__ = ["OpenAIRealtimeAdapter"]


class OpenAIRealtimeAdapter(ProviderAdapter):
    """The steward's view of an ``OpenAIRealtimeLLMService``."""

    kind = LLMKind.OPENAI_REALTIME
    channels = Channels(
        kind=LLMKind.OPENAI_REALTIME,
        silent_note=True,
        instruction_update=True,
        tool_set_update=True,
        interrupt=True,
    )
    service = ("pipecat.services.openai.realtime.llm", "OpenAIRealtimeLLMService")

    def needs_response_request(self) -> bool:
        """True when turn detection is told not to create the response itself."""
        props = getattr(self.llm.settings, "session_properties", None)
        audio = getattr(props, "audio", None)
        detection = getattr(getattr(audio, "input", None), "turn_detection", None)
        return getattr(detection, "create_response", None) is False

    def advertise_tools(self, tools: ToolsSchema) -> None:
        """Put ``tools`` in the session properties sent when the session is set up."""
        props = getattr(self.llm.settings, "session_properties", None)
        if props is not None and hasattr(props, "tools"):
            props.tools = tools

    async def update_session(self, *, tools: ToolsSchema, instructions: str) -> None:
        """Queue a ``session.update`` replacing the session's tools and instructions.

        Uninterruptible, so a barge-in cannot drop it from the service's queue.
        """
        frame = LLMUpdateSettingsFrame(delta=self._delta(tools, instructions))
        frame.interruptible = False
        await self.llm.queue_frame(frame)

    async def interrupt(self) -> None:
        """Truncate the bot's speech and cancel the response the server is still generating."""
        from pipecat.services.openai.realtime import events

        await self.llm.broadcast_interruption()
        send = getattr(self.llm, "send_client_event", None)
        if send is not None:
            await send(events.ResponseCancelEvent())

    def _delta(self, tools: ToolsSchema, instructions: str) -> Any:
        settings: Any = self.llm.settings
        props = settings.session_properties.model_copy(update={"tools": tools})
        return type(settings)(system_instruction=instructions, session_properties=props)
