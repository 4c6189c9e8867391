"""A local Gemini Live (BidiGenerateContent) TLS websocket server for offline S2S tests.

google-genai always opens `wss://` when an API key is set, so the fake serves TLS with a
self-signed certificate for 127.0.0.1 made at start-up; `http_options()` returns the
`HttpOptions` that make the client trust it:

    async with GeminiLiveServer([Say("Hello.")]) as server:
        llm = GeminiLiveLLMService(api_key="test", http_options=server.http_options())

The first client message (`setup`) is answered with `setupComplete`; a completed client
turn or a tool response starts the next scripted step (`serverContent` with audio and
`outputTranscription`, or a `toolCall`). Client keys arrive snake_case at the top level and
camelCase below; `received` holds them normalised to camelCase.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
from collections.abc import Iterable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from pipecat_steward.testing.script import Call, Step, split_step
from pipecat_steward.testing.servers._base import (
    DEFAULT_REPLY,
    ScriptedFake,
    StepSource,
    listen_websocket,
)
from pipecat_steward.testing.servers.tls import make_self_signed_cert

Message = dict[str, Any]
_AUDIO_MIME = "audio/pcm;rate=24000"
_CHUNK = base64.b64encode(b"\x00\x00" * 480).decode()  # 20 ms of 24 kHz silence
_OPAQUE = frozenset({"args", "response"})  # user payloads: keys kept as sent


class GeminiLiveServer(ScriptedFake[Message]):
    """A Gemini Live endpoint on 127.0.0.1 over TLS.

    Attributes:
        received: Every client message, camelCase keys, in order.

    """

    def __init__(self, script: Iterable[StepSource] = (), *, default: Step = DEFAULT_REPLY):
        """Create the server (it listens on `__aenter__`).

        Args:
            script: One step per model turn; a callable step gets the triggering message.
            default: The response once the script is exhausted.

        """
        super().__init__(script, default=default)
        self._ws: ServerConnection | None = None
        self.cert_path: Path | None = None

    @property
    def base_url(self) -> str:
        """The endpoint's `https://` base URL."""
        return f"https://127.0.0.1:{self.port}"

    def client_ssl_context(self) -> ssl.SSLContext:
        """Return an SSL context that trusts this server's certificate."""
        assert self.cert_path is not None, "start the server first"
        return ssl.create_default_context(cafile=str(self.cert_path))

    def http_options(self) -> Any:
        """`google.genai.types.HttpOptions` pointing a client at this server."""
        from google.genai.types import HttpOptions

        args = {"ssl": self.client_ssl_context()}
        return HttpOptions(base_url=self.base_url, async_client_args=args)

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="steward-gemini-"))
        cert, key = make_self_signed_cert(Path(folder))
        self.cert_path = cert
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        return await listen_websocket(stack, self._handle, port, ssl=context)

    def texts(self) -> list[str]:
        """Every text the client sent in `clientContent` turns or `realtimeInput`."""
        found: list[str] = []
        for message in self.received:
            turns = message.get("clientContent", {}).get("turns", [])
            found += [p["text"] for t in turns for p in t.get("parts", []) if "text" in p]
            if "text" in message.get("realtimeInput", {}):
                found.append(message["realtimeInput"]["text"])
        return found

    def tool_responses(self) -> list[Message]:
        """Every function response the client sent."""
        found: list[Message] = []
        for message in self.received:
            found += message.get("toolResponse", {}).get("functionResponses", [])
        return found

    async def user_says(self, text: str) -> None:
        """Send an input transcription, as when the caller spoke `text`."""
        await self._send({"serverContent": {"inputTranscription": {"text": text}}})

    async def _handle(self, ws: ServerConnection) -> None:
        self._ws = ws
        try:
            async for raw in ws:
                await self._on_client_message(camel_keys(json.loads(raw)))
        except ConnectionClosed:
            pass

    async def _on_client_message(self, message: Message) -> None:
        self.record(message)
        if "setup" in message:
            await self._send({"setupComplete": {}})
        elif message.get("clientContent", {}).get("turnComplete") or "toolResponse" in message:
            self.spawn(self._respond(self.next_step(message)))

    async def _respond(self, step: Step) -> None:
        text, calls = split_step(step)
        if text:
            await self._speak(text)
        if calls:
            await self._send({"toolCall": {"functionCalls": [self._call(c) for c in calls]}})
            return
        await self._send({"serverContent": {"generationComplete": True}})
        usage = {"promptTokenCount": 1, "responseTokenCount": 1, "totalTokenCount": 2}
        await self._send({"serverContent": {"turnComplete": True}, "usageMetadata": usage})

    async def _speak(self, text: str) -> None:
        for index, word in enumerate(text.split(" ")):
            audio = {"inlineData": {"mimeType": _AUDIO_MIME, "data": _CHUNK}}
            content: Message = {"modelTurn": {"parts": [audio]}}
            content["outputTranscription"] = {"text": (" " if index else "") + word}
            await self._send({"serverContent": content})
            await asyncio.sleep(0)

    def _call(self, call: Call) -> Message:
        call_id = call.tool_call_id or self.new_id("fc")
        return {"id": call_id, "name": call.name, "args": dict(call.args)}

    async def _send(self, message: Message) -> None:
        if self._ws is None:
            return
        try:
            await self._ws.send(json.dumps(message))
        except ConnectionClosed:
            self._ws = None


def camel_keys(value: Any) -> Any:
    """Return `value` with snake_case dict keys turned camelCase (user payloads untouched)."""
    if isinstance(value, list):
        return [camel_keys(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {_camel(k): (v if k in _OPAQUE else camel_keys(v)) for k, v in value.items()}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)
