"""A local Gemini Live (BidiGenerateContent) TLS websocket server for offline S2S tests.

google-genai always opens `wss://` when an API key is set, so the fake serves TLS with a
self-signed certificate for 127.0.0.1 made at start-up; `http_options()` returns the
`HttpOptions` that make the client trust it:

    async with GeminiLiveServer([Say("Hello.")]) as server:
        llm = GeminiLiveLLMService(api_key="test", http_options=server.http_options())

(`gemini_live_service(server, **kwargs)` builds exactly that.)

The first client message (`setup`) is answered with `setupComplete`; a completed client
turn or a tool response starts the next scripted step (`serverContent` with audio and
`outputTranscription`, or a `toolCall`). Client keys arrive snake_case at the top level and
camelCase below; `received` holds them normalised to camelCase.

`settler(llm)` lets a harness wait for explicit completion instead of quiet time (see
`GeminiSettler`): a marker tool response goes out on the service's own session, after
everything the service sent before it; the fake answers it once every response it started has
ended, with a marker `sessionResumptionUpdate` that pipecat dispatches after everything the
fake sent before it. A websocket keeps each direction's order, so when the service has
dispatched the answer, each side has handled everything the other sent before the sync.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from pipecat_steward.testing.script import Call, Step, split_step
from pipecat_steward.testing.servers._base import (
    DEFAULT_REPLY,
    RespondingFake,
    StepSource,
    listen_websocket,
)
from pipecat_steward.testing.servers.tls import make_self_signed_cert

Message = dict[str, Any]
_AUDIO_MIME = "audio/pcm;rate=24000"
_CHUNK = base64.b64encode(b"\x00\x00" * 480).decode()  # 20 ms of 24 kHz silence
_OPAQUE = frozenset({"args", "response"})  # user payloads: keys kept as sent
SETTLE_TOOL = "steward_settle"
"""The function name of the marker tool response a settler sends (never recorded)."""
_HANDLE = "steward-settled:"


class GeminiLiveServer(RespondingFake[Message]):
    """A Gemini Live endpoint on 127.0.0.1 over TLS.

    Attributes:
        received: Every client message, camelCase keys, in order.

    """

    def __init__(
        self,
        script: Iterable[StepSource] = (),
        *,
        default: Step = DEFAULT_REPLY,
        latency: float = 0.0,
    ) -> None:
        """Create the server (it listens on `__aenter__`).

        Args:
            script: One step per model turn; a callable step gets the triggering message.
            default: The response once the script is exhausted.
            latency: Seconds before each response starts, as a provider's time to first audio.

        """
        super().__init__(script, default=default, latency=latency)
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

    def settler(self, llm: Any) -> GeminiSettler:
        """A ``ProviderSync`` for a ``TextPipeline`` of ``llm`` (this fake's service).

        Make it before the pipeline starts: it must see the service ready its session.
        """
        return GeminiSettler(llm)

    async def _on_client_message(self, message: Message) -> None:
        marker = _settle_marker(message)
        if marker is not None:
            self.spawn(self._answer_settle(marker, len(self.received)))
            return
        self.record(message)
        if "setup" in message:
            await self._send({"setupComplete": {}})
        elif message.get("clientContent", {}).get("turnComplete") or "toolResponse" in message:
            self.start_response(message)

    async def _answer_settle(self, marker: str, received: int) -> None:
        """Once every response started so far has ended, answer the settle marker.

        The answer carries how many client messages were recorded when the marker arrived;
        pipecat stores a resumption handle only when ``resumable``, so it ignores this one.
        """
        await self.responses_ended()
        update = {"newHandle": f"{_HANDLE}{marker}:{received}", "resumable": False}
        await self._send({"sessionResumptionUpdate": update})

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


class GeminiSettler:
    """Waits until the fake and pipecat's Gemini Live service have handled what each sent.

    Call it (``await settler()``): it returns the number of client messages the fake had
    recorded when the marker reached it. Pipecat offers no public per-message event for
    Gemini Live, so the settler reads and hooks private members of ``GeminiLiveLLMService``
    (pipecat 1.14), and fails at once, naming the member, when pipecat no longer has one:

    * ``_session`` and ``_connection_task``: the marker goes out on the service's own
      google-genai session; a sync fails at once if the connection ended without one.
    * ``_handle_session_ready``: the marker goes on ``_session`` only once the service has
      finished readying a session, so it cannot overtake the history pipecat seeds then.
    * ``_handle_server_message``: the receive loop awaits it for each message in order; the
      answer counts once it has returned, when every earlier message was fully dispatched.
    * ``_transcription_timeout_task``: pipecat holds a caller transcript with no end
      punctuation for 0.5 s before pushing it. If that flush is pending after the answer,
      the settler waits for it and returns a negative number, a different one every time, so
      the harness's next sync cannot agree with this one and it looks again.

    A reconnect drops the answer with the old session: a new session's readiness resolves
    any pending sync with such a negative number too.
    """

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        for name in ("_session", "_connection_task", "_transcription_timeout_task"):
            _private(llm, name)
        self._ids = itertools.count(1)
        self._unsettled = itertools.count(-1, -1)
        self._waiting: dict[str, asyncio.Future[int]] = {}
        self._readying = 0
        self._ready = asyncio.Event()
        self._ready.set()
        _wrap(llm, "_handle_session_ready", self._on_session_ready)
        _wrap(llm, "_handle_server_message", self._on_message)

    async def __call__(self) -> int:
        session = await self._session()
        marker = f"settle-{next(self._ids)}"
        answered: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting[marker] = answered
        try:
            response = {"name": SETTLE_TOOL, "id": marker, "response": {}}
            await session.send_tool_response(function_responses=response)
            received = await answered
        finally:
            self._waiting.pop(marker, None)
        return await self._after_flush(received)

    async def _session(self) -> Any:
        """The service's session, once it is up and readied; fails if its connection ended."""
        while self._readying or self.llm._session is None:
            connection = self.llm._connection_task
            if connection is not None and connection.done():
                raise RuntimeError(f"{self.llm}'s connection ended: it has no session to sync")
            self._ready.clear()
            ready = asyncio.ensure_future(self._ready.wait())
            waits = {ready} if connection is None else {ready, connection}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
        return self.llm._session

    async def _after_flush(self, received: int) -> int:
        flush = self.llm._transcription_timeout_task
        if flush is None or flush.done():
            return received
        await asyncio.wait({flush})
        return next(self._unsettled)

    async def _on_session_ready(self, ready: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self._readying += 1
        try:
            await ready(*args)
        finally:
            self._readying -= 1
            self._ready.set()
            for answered in self._waiting.values():
                if not answered.done():
                    answered.set_result(next(self._unsettled))

    async def _on_message(self, handle: Callable[..., Awaitable[Any]], message: Any) -> None:
        await handle(message)
        update = message.session_resumption_update
        marker, _, received = (update and update.new_handle or "").rpartition(":")
        answered = self._waiting.get(marker.removeprefix(_HANDLE))
        if marker.startswith(_HANDLE) and answered is not None and not answered.done():
            answered.set_result(int(received))


def gemini_live_service(fake: GeminiLiveServer, **kwargs: Any) -> Any:
    """Build a real ``GeminiLiveLLMService`` that talks to ``fake``.

    Args:
        fake: The running server.
        **kwargs: Passed to ``GeminiLiveLLMService`` (the API key defaults to a dummy).
    """
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

    options: dict[str, Any] = {"api_key": "test", **kwargs}
    return GeminiLiveLLMService(http_options=fake.http_options(), **options)


def _private(llm: Any, name: str) -> Any:
    if not hasattr(llm, name):
        raise TypeError(
            f"GeminiSettler needs pipecat's GeminiLiveLLMService member {name!r}, which "
            f"{type(llm).__name__} lacks (did pipecat change?)"
        )
    return getattr(llm, name)


def _wrap(llm: Any, name: str, hook: Callable[..., Awaitable[None]]) -> None:
    """Make ``llm.<name>(*args)`` run ``hook(original, *args)`` (on this instance only)."""
    original = _private(llm, name)

    async def hooked(*args: Any) -> None:
        await hook(original, *args)

    setattr(llm, name, hooked)


def _settle_marker(message: Message) -> str | None:
    """The marker id when ``message`` is a settler's marker tool response."""
    responses = message.get("toolResponse", {}).get("functionResponses", [])
    if len(responses) == 1 and responses[0].get("name") == SETTLE_TOOL:
        return str(responses[0].get("id"))
    return None


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
