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

__all__ = ["send_client_messages"]


async def send_client_messages(
    processor: FrameProcessor, messages: Iterable[Mapping[str, Any]], *, queue: bool = False
) -> None:
    """Send each message downstream from ``processor`` as an ``RTVIServerMessageFrame``.

    Args:
        processor: The LLM service (or the processor in its place) the messages leave from.
        messages: The messages, in order.
        queue: Queue the frames into ``processor`` (from outside its frame handling, as the
            speech-to-speech adapter does) instead of pushing them from inside it.
    """
    for message in messages:
        frame = RTVIServerMessageFrame(data=dict(message))
        if queue:
            await processor.queue_frame(frame)
        else:
            await processor.push_frame(frame, FrameDirection.DOWNSTREAM)
