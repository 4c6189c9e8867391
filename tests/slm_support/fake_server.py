"""A local HTTP server that speaks the providers' real wire shapes, scripted per test.

One aiohttp server on 127.0.0.1 answers every route the SDKs call:

- OpenAI chat completions: ``POST /v1/chat/completions``
- Gemini API ``generateContent``: ``POST /v1beta/models/{model}:generateContent``
- Vertex ``generateContent``: ``POST /v1beta1/.../publishers/google/models/{model}:generateContent``
- Bedrock Converse: ``POST /model/{modelId}/converse``
- OAuth token refresh (for Vertex with Application Default Credentials): ``POST /token``

A test queues :class:`Reply` objects (status, body, delay); with nothing queued the server asks
its ``responder`` (the default answers with a canned valid object). Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from pipecat_steward.testing.servers._base import LocalServer, listen_http


@dataclass
class Reply:
    """One scripted answer: a JSON body (dict) or raw text, an HTTP status, a delay."""

    body: Any
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def chat_completion(content: str, prompt_tokens: int = 42, completion_tokens: int = 7) -> dict:
    """Return an OpenAI chat-completions response carrying ``content``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def openai_error(message: str, code: str = "invalid_request_error") -> dict:
    """Return an OpenAI-style error body."""
    return {"error": {"message": message, "type": code, "param": None, "code": None}}


def gemini_response(text: str, prompt_tokens: int = 30, output_tokens: int = 5) -> dict:
    """Return a ``generateContent`` response carrying ``text``."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
        },
        "modelVersion": "gemini-fake",
    }


def google_error(code: int, message: str, status: str) -> dict:
    """Return a Google API error body."""
    return {"error": {"code": code, "message": message, "status": status}}


def converse_tool_response(tool_input: Any, input_tokens: int = 25, output_tokens: int = 9) -> dict:
    """Return a Converse response whose message is one ``toolUse`` with ``tool_input``."""
    use = {"toolUseId": "tooluse_1", "name": "emit_result", "input": tool_input}
    return _converse([{"toolUse": use}], "tool_use", input_tokens, output_tokens)


def converse_text_response(text: str, input_tokens: int = 25, output_tokens: int = 9) -> dict:
    """Return a Converse response whose message is ``text``."""
    return _converse([{"text": text}], "end_turn", input_tokens, output_tokens)


def _converse(content: list, stop: str, input_tokens: int, output_tokens: int) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens,
        },
        "metrics": {"latencyMs": 12},
    }


def default_responder(seen: Seen) -> Reply:
    """Answer each protocol with a canned, valid ``{"name": "Ada", "age": 36}``."""
    value = json.dumps({"name": "Ada", "age": 36})
    if seen.path.endswith("/token"):
        return Reply({"access_token": "fake-token", "expires_in": 3600, "token_type": "Bearer"})
    if seen.path.endswith(":generateContent"):
        return Reply(gemini_response(value))
    if seen.path.endswith("/converse"):
        return Reply(converse_tool_response(json.loads(value)))
    return Reply(chat_completion(value))


class FakeProviderServer(LocalServer):
    """The scripted server; use :meth:`start` / :meth:`stop` or the fixture."""

    def __init__(self, responder: Callable[[Seen], Reply] = default_responder) -> None:
        super().__init__()
        self.responder = responder
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        self.replies.extend(replies)

    def requests_to(self, suffix: str) -> list[Seen]:
        """Return the recorded requests whose path ends with ``suffix``."""
        return [s for s in self.seen if s.path.endswith(suffix)]

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return await listen_http(stack, app, port)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        seen = Seen(request.method, request.path, dict(request.headers), body)
        self.seen.append(seen)
        reply = self.replies.popleft() if self.replies else self.responder(seen)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if isinstance(reply.body, str):
            return web.Response(
                status=reply.status,
                text=reply.body,
                content_type="application/json",
                headers=reply.headers,
            )
        return web.json_response(reply.body, status=reply.status, headers=reply.headers)
