"""The one way the steward's messages for the client leave: RTVI server messages.

Checklist status (``procedure_status``), rich response parts (``steward_response``) and the
other messages the runtime queues for the app's client go out through ``send_client_messages``,
from whichever host produced them (the cascaded hook, a tool call, the speech-to-speech adapter).

Only pipecat's ``RTVIObserver`` turns these frames into messages for the client; a
``PipelineWorker`` adds one unless RTVI is off (``enable_rtvi=False``, or a bridged pipeline).
``follow_client`` lets a steward that was not told whether a client reads its messages find out
from the pipeline its service is set up in: in a pipeline without RTVI each message would cross
every processor and observer for nobody.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pipecat.processors.frame_processor import (
    FrameDirection,
    FrameProcessor,
    FrameProcessorSetup,
)
from pipecat.processors.frameworks.rtvi import RTVIObserver
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame

if TYPE_CHECKING:
    from pipecat_steward.runtime.session import StewardSession

__all__ = ["StewardMessageFrame", "follow_client", "reaches_client", "send_client_messages"]


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


def reaches_client(observer: object) -> bool:
    """Whether a pipeline whose processors report to ``observer`` delivers RTVI server messages.

    Args:
        observer: The observer a processor's setup gives it (``FrameProcessorSetup.observer``):
            the pipeline worker's, which holds every observer of the pipeline.
    """
    worker = getattr(observer, "worker", observer)  # the relay's in-place reader wraps it
    observers: Iterable[object] = getattr(worker, "_observers", None) or ()
    return any(isinstance(o, RTVIObserver) for o in observers)


def follow_client(processor: FrameProcessor, session: StewardSession) -> None:
    """Have ``session`` send client messages only when ``processor``'s pipeline delivers them.

    Decided when the pipeline sets ``processor`` up, before any frame flows, from the
    observers it reports to (see ``reaches_client``).
    """
    setup = processor.setup

    async def setup_and_look(config: FrameProcessorSetup) -> None:
        session.sends_client_messages = reaches_client(config.observer)
        await setup(config)

    processor.setup = setup_and_look  # type: ignore[method-assign]
