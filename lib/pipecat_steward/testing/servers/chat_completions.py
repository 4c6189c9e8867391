"""A local OpenAI chat-completions server for testing cascaded pipelines offline.

Point any OpenAI-compatible pipecat service at it with
`OpenAILLMService(api_key="test", base_url=server.base_url, ...)`. Each request takes the
next scripted step and answers it (SSE when `stream` is set, JSON otherwise) with text
and/or `tool_calls`. Every request body is recorded, and a request that breaks OpenAI's
tool-message ordering rule gets the same 400 the real API returns.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from typing import Any

from aiohttp import web

from pipecat_steward.testing.script import Call, Step, split_step
from pipecat_steward.testing.servers._base import (
    DEFAULT_REPLY,
    ScriptedFake,
    StepSource,
    listen_http,
)

Body = dict[str, Any]
# No keep-alive: the client's pooled socket would outlive the server and leak (the
# clients are rarely closed by their services), which tests see as a ResourceWarning.
_CLOSE = {"Connection": "close"}


class ChatCompletionsServer(ScriptedFake[Body]):
    """`POST /v1/chat/completions` on 127.0.0.1, scripted per request.

    Attributes:
        received: Every request body, in order.
        errors: The ordering-rule violations answered with 400.

    """

    def __init__(
        self,
        script: Iterable[StepSource] = (),
        *,
        default: Step = DEFAULT_REPLY,
        token_delay: float = 0.0,
    ) -> None:
        """Create the server (it listens on `__aenter__`).

        Args:
            script: One step per request; a callable step receives the request body.
            default: The answer once the script is exhausted.
            token_delay: Seconds between streamed chunks.

        """
        super().__init__(script, default=default)
        self.errors: list[str] = []
        self._token_delay = token_delay

    @property
    def base_url(self) -> str:
        """The `base_url` to give an OpenAI client."""
        return f"http://127.0.0.1:{self.port}/v1"

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        return await listen_http(stack, app, port)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: Body = await request.json()
        self.record(body)
        error = tool_ordering_error(body.get("messages", []))
        if error is not None:
            self.errors.append(error)
            payload = {"error": {"message": error, "type": "invalid_request_error"}}
            return web.json_response(payload, status=400, headers=_CLOSE)
        text, calls = split_step(self.next_step(body))
        if not body.get("stream"):
            return web.json_response(self._completion(body, text, calls), headers=_CLOSE)
        return await self._stream(request, body, text, calls)

    def _completion(self, body: Body, text: str, calls: list[Call]) -> Body:
        message: Body = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [self._tool_call(c) for c in calls]
        choice = {"index": 0, "message": message, "finish_reason": _finish(calls)}
        return _envelope(body, "chat.completion", choice)

    async def _stream(
        self, request: web.Request, body: Body, text: str, calls: list[Call]
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_CLOSE})
        await response.prepare(request)
        for delta in [*_text_deltas(text), *self._call_deltas(calls)]:
            await self._send(response, body, delta)
        await self._send(response, body, {}, _finish(calls))
        await response.write(b"data: [DONE]\n\n")
        return response

    async def _send(
        self, response: web.StreamResponse, body: Body, delta: Body, finish: str | None = None
    ) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        chunk = _envelope(body, "chat.completion.chunk", choice)
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if self._token_delay:
            await asyncio.sleep(self._token_delay)

    def _tool_call(self, call: Call) -> Body:
        call_id = call.tool_call_id or self.new_id("call")
        arguments = json.dumps(dict(call.args))
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }

    def _call_deltas(self, calls: list[Call]) -> list[Body]:
        # Like the real API: the id and name first, then the arguments in pieces.
        deltas: list[Body] = []
        for index, call in enumerate(calls):
            full = self._tool_call(call)
            args = full["function"]["arguments"]
            head = {**full, "index": index, "function": {"name": call.name, "arguments": ""}}
            deltas.append({"role": "assistant", "tool_calls": [head]})
            for part in (args[: len(args) // 2], args[len(args) // 2 :]):
                deltas.append({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        return deltas


def tool_ordering_error(messages: list[Mapping[str, Any]]) -> str | None:
    """Describe how `messages` break OpenAI's tool ordering rule, or None if they don't.

    Every assistant message with `tool_calls` must be followed by `tool` messages answering
    each call id, and a `tool` message must answer such a call.
    """
    open_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_ids:
                return f"messages[{index}]: role 'tool' must answer a preceding tool call"
            open_ids.discard(str(message.get("tool_call_id")))
            continue
        if open_ids:
            return f"messages[{index}]: tool calls {sorted(open_ids)} have no tool response"
        if role == "assistant" and message.get("tool_calls"):
            open_ids = {str(tc["id"]) for tc in message["tool_calls"]}
    return f"tool calls {sorted(open_ids)} have no tool response" if open_ids else None


def _text_deltas(text: str) -> list[Body]:
    words = text.split(" ") if text else []
    deltas = [{"content": (" " if i else "") + word} for i, word in enumerate(words)]
    if deltas:
        deltas[0]["role"] = "assistant"
    return deltas


def _finish(calls: list[Call]) -> str:
    return "tool_calls" if calls else "stop"


def _envelope(body: Body, kind: str, choice: Body) -> Body:
    model = body.get("model", "fake")
    return {
        "id": "chatcmpl-fake",
        "object": kind,
        "created": 0,
        "model": model,
        "choices": [choice],
    }
