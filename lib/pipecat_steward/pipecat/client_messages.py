"""The one way the steward's messages for the client leave: RTVI server messages.

Checklist status (``procedure_status``), rich response parts (``steward_response``) and the
other messages the runtime queues for the app's client go out through ``send_client_messages``,
from whichever host produced them (the cascaded hook, a tool call, the speech-to-speech adapter).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame

__all__ = ["StewardMessageFrame", "send_client_messages"]


class StewardMessageFrame(RTVIServerMessageFrame):
    """An ``RTVIServerMessageFrame`` carrying one steward message, described by its type only.

    Pipecat formats every frame it pushes into a trace line, whatever the log level, once per
    processor; a steward message carries a whole flush of events, so its description names the
    message's type instead of printing the payload at every hop.
    """

    def __str__(self) -> str:
        kind = self.data.get("type") if isinstance(self.data, dict) else None
        return f"{self.name}(type: {kind})"


async def send_client_messages(
    processor: FrameProcessor, messages: Iterable[Mapping[str, Any]], *, queue: bool = False
) -> None:
    """Send each message downstream from ``processor`` as an RTVI server message frame.

    Args:
        processor: The LLM service (or the processor in its place) the messages leave from.
        messages: The messages, in order.
        queue: Queue the frames into ``processor`` (from outside its frame handling, as the
            speech-to-speech adapter does) instead of pushing them from inside it.
    """
    for message in messages:
        frame = StewardMessageFrame(data=dict(message))
        if queue:
            await processor.queue_frame(frame)
        else:
            await processor.push_frame(frame, FrameDirection.DOWNSTREAM)
