"""A local OpenAI Realtime (GA protocol) websocket server for offline S2S tests.

Give pipecat's `OpenAIRealtimeLLMService(api_key="test", base_url=server.url)`. The fake
speaks enough of the protocol for the real service: `session.created`, `session.updated`
for every `session.update`, `conversation.item.added`/`.done` echoes, and for each
`response.create` the next scripted step as transcript + audio deltas and/or function
calls, ending in `response.done`. `user_says` pushes a caller transcript as the server's
input-audio transcription would. Every client event is recorded in `received`.

`settler(llm)` lets a harness wait for explicit completion instead of quiet time: it sends a
marker client event through the service's own connection, the fake answers it once every
response it started has ended, with a marker server event the service reports through its
public ``on_conversation_item_updated`` event. Both connections keep their order, so when the
answer comes back the fake has handled everything the service sent before the marker, and the
service has handled everything the fake sent before its answer.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from collections.abc import Iterable
from contextlib import AsyncExitStack
from typing import Any, Literal

from pipecat.services.openai.realtime.events import ClientEvent
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from pipecat_steward.testing.script import Call, Step, split_step
from pipecat_steward.testing.servers._base import (
    DEFAULT_REPLY,
    RespondingFake,
    StepSource,
    listen_websocket,
)

Event = dict[str, Any]
_SAMPLE_RATE = 24_000
_CHUNK_SECS = 0.02
SETTLE_EVENT = "steward.settle"
"""The type of the marker client event a settler sends (this fake's own; never recorded)."""
_MARKER = "steward-settled-"


class SettleEvent(ClientEvent):
    """The marker client event ``RealtimeSettler`` sends through the service's connection."""

    type: Literal["steward.settle"] = "steward.settle"


class RealtimeServer(RespondingFake[Event]):
    """An OpenAI Realtime websocket endpoint on 127.0.0.1.

    Attributes:
        received: Every client event, in order.

    """

    def __init__(
        self,
        script: Iterable[StepSource] = (),
        *,
        default: Step = DEFAULT_REPLY,
        chunks_per_word: int = 1,
        latency: float = 0.0,
    ) -> None:
        """Create the server (it listens on `__aenter__`).

        Args:
            script: One step per `response.create`; a callable step gets that client event.
            default: The response once the script is exhausted.
            chunks_per_word: 20 ms audio chunks sent per transcript word.
            latency: Seconds before each response starts, as a provider's time to first audio.

        """
        super().__init__(script, default=default, latency=latency)
        self._chunks_per_word = chunks_per_word
        self._ws: ServerConnection | None = None
        self._cancelled = False

    @property
    def url(self) -> str:
        """The `base_url` to give `OpenAIRealtimeLLMService`."""
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        return await listen_websocket(stack, self._handle, port)

    def of_type(self, event_type: str) -> list[Event]:
        """Return the received client events of one type."""
        return [e for e in self.received if e.get("type") == event_type]

    async def user_says(self, text: str) -> None:
        """Send a completed input-audio transcription, as when the caller spoke `text`."""
        await self._send(
            {
                "type": "conversation.item.input_audio_transcription.completed",
                "item_id": self.new_id("item"),
                "content_index": 0,
                "transcript": text,
            }
        )

    async def _handle(self, ws: ServerConnection) -> None:
        self._ws = ws
        await self._send({"type": "session.created", "session": {"type": "realtime"}})
        try:
            async for raw in ws:
                await self._on_client_event(json.loads(raw))
        except ConnectionClosed:
            pass

    def settler(self, llm: Any) -> RealtimeSettler:
        """A ``ProviderSync`` for a ``TextPipeline`` of ``llm`` (this fake's service)."""
        return RealtimeSettler(self, llm)

    async def _on_client_event(self, event: Event) -> None:
        kind = event.get("type")
        if kind == SETTLE_EVENT:
            self.spawn(self._answer_settle(str(event["event_id"]), len(self.received)))
            return
        self.record(event)
        if kind == "session.update":
            await self._send({"type": "session.updated", "session": event["session"]})
        elif kind == "conversation.item.create":
            await self._send({"type": "conversation.item.added", "item": event["item"]})
            await self._send({"type": "conversation.item.done", "item": event["item"]})
        elif kind == "response.create":
            self._cancelled = False
            self.start_response(event)
        elif kind == "response.cancel":
            self._cancelled = True

    async def _answer_settle(self, marker: str, received: int) -> None:
        """Once every response started so far has ended, answer the settle marker.

        The answer carries how many client events were recorded when the marker arrived.
        """
        await self.responses_ended()
        content = [{"type": "text", "text": str(received)}]
        item = {"id": _MARKER + marker, "type": "message", "role": "system", "content": content}
        await self._send({"type": "conversation.item.done", "item": item})

    async def _respond(self, step: Step) -> None:
        response_id = self.new_id("resp")
        created = {"id": response_id, "status": "in_progress", "output": []}
        await self._send({"type": "response.created", "response": created})
        text, calls = split_step(step)
        output = [await self._speak(response_id, text)] if text else []
        for call in calls:
            output.append(await self._call(response_id, call))
        status = "cancelled" if self._cancelled else "completed"
        done = {"id": response_id, "status": status, "output": output}
        await self._send({"type": "response.done", "response": done})

    async def _speak(self, response_id: str, text: str) -> Event:
        item_id = self.new_id("item")
        item: Event = {"id": item_id, "type": "message", "role": "assistant", "content": []}
        await self._send({"type": "conversation.item.added", "item": item})
        where = {"response_id": response_id, "item_id": item_id, "output_index": 0}
        where["content_index"] = 0
        for index, word in enumerate(text.split(" ")):
            if self._cancelled:
                break
            delta = (" " if index else "") + word
            await self._send(
                {"type": "response.output_audio_transcript.delta", **where, "delta": delta}
            )
            await self._send_audio(where)
        await self._send(
            {"type": "response.output_audio_transcript.done", **where, "transcript": text}
        )
        await self._send({"type": "response.output_audio.done", **where})
        return {**item, "content": [{"type": "output_audio", "transcript": text}]}

    async def _send_audio(self, where: Event) -> None:
        chunk = base64.b64encode(b"\x00\x00" * int(_SAMPLE_RATE * _CHUNK_SECS)).decode()
        for _ in range(self._chunks_per_word):
            await self._send({"type": "response.output_audio.delta", **where, "delta": chunk})
            await asyncio.sleep(0)

    async def _call(self, response_id: str, call: Call) -> Event:
        call_id = call.tool_call_id or self.new_id("call")
        arguments = json.dumps(dict(call.args))
        item_id = self.new_id("item")
        item: Event = {"id": item_id, "type": "function_call", "name": call.name}
        item |= {"call_id": call_id, "arguments": ""}
        await self._send({"type": "conversation.item.added", "item": item})
        done = {"response_id": response_id, "item_id": item_id, "output_index": 0}
        done |= {"call_id": call_id, "arguments": arguments}
        await self._send({"type": "response.function_call_arguments.done", **done})
        return {**item, "arguments": arguments}

    async def _send(self, event: Event) -> None:
        if self._ws is None:
            return
        event.setdefault("event_id", self.new_id("evt"))
        try:
            await self._ws.send(json.dumps(event))
        except ConnectionClosed:
            self._ws = None


class RealtimeSettler:
    """Waits until the fake and its service have handled everything each sent the other.

    Call it (``await settler()``): it returns the number of client events the fake had
    recorded when the marker reached it (see the module docstring).
    """

    def __init__(self, fake: RealtimeServer, llm: Any) -> None:
        self.fake = fake
        self.llm = llm
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[int]] = {}
        llm.add_event_handler("on_conversation_item_updated", self._on_item)

    async def __call__(self) -> int:
        marker = f"settle-{next(self._ids)}"
        answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting[marker] = answered
        try:
            await self.llm.send_client_event(SettleEvent(event_id=marker))
            return await answered
        finally:
            self._waiting.pop(marker, None)

    async def _on_item(self, _llm: Any, item_id: str, item: Any) -> None:
        answered = self._waiting.get(item_id.removeprefix(_MARKER))
        if item_id.startswith(_MARKER) and answered is not None and not answered.done():
            answered.set_result(int(item.content[0].text))
