"""OpenAI and OpenAI-compatible endpoints (vLLM, llama.cpp, Ollama) through the ``openai`` SDK.

Structure is requested with ``response_format`` ``json_schema`` strict. Servers that reject it
(llama.cpp's Python server does) are served in ``json_object`` mode: the schema is echoed in
the system prompt and, for compatible servers, also sent as ``response_format.schema``, which
llama.cpp turns into a decoding grammar. In ``auto`` mode the first rejection switches the
endpoint to ``json_object`` for the rest of this adapter's life.
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai
from openai import AsyncOpenAI

from pipecat_steward.exceptions import (
    SLMOutputError,
    SLMResolutionError,
    SLMTimeoutError,
    SLMTransportError,
)
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.prompts import schema_instruction
from pipecat_steward.slm.result import ProviderReply, ProviderRequest, Usage

__all__ = ["OpenAICompatProvider"]

_NO_KEY = "not-needed"  # self-hosted servers ignore the key, but the SDK insists on one


class OpenAICompatProvider:
    """One OpenAI-compatible endpoint; remembers which JSON mode it accepts."""

    def __init__(self, stage: SLMStage) -> None:
        env = stage.api_key_env or "OPENAI_API_KEY"
        key = os.environ.get(env)
        if not key and stage.provider == "openai":
            raise SLMResolutionError(f"logic_slm (openai): environment variable {env} is not set")
        self._compatible = stage.provider == "openai_compatible"
        self._client = AsyncOpenAI(
            api_key=key or _NO_KEY,
            base_url=stage.base_url,
            max_retries=0,  # the caller's timeout is the whole budget; a retry would overrun it
            timeout=stage.timeout_s,
        )
        self._detected: str | None = None

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Call chat completions in the endpoint's JSON mode (or plain text without a schema)."""
        mode = self._mode(request)
        probing = mode == "json_schema" and request.stage.structured_mode == "auto"
        try:
            return await self._call(request, mode, probing=probing)
        except _SchemaModeRejected:
            self._detected = "json_object"  # the endpoint rejected json_schema: remember it
            return await self._call(request, "json_object", probing=False)

    def _mode(self, request: ProviderRequest) -> str:
        """Pick the mode: text without a schema, the configured mode, or the detected one."""
        if request.schema is None:
            return "text"
        if request.stage.structured_mode != "auto":
            return request.stage.structured_mode
        return self._detected or "json_schema"

    async def _call(self, request: ProviderRequest, mode: str, *, probing: bool) -> ProviderReply:
        """Make one chat-completions request and read its text and usage."""
        try:
            completion = await self._client.chat.completions.create(**self._params(request, mode))
        except openai.APIStatusError as err:
            if probing and _rejects_json_schema(err):
                raise _SchemaModeRejected from None
            raise _transport(err) from None
        except openai.APITimeoutError:
            raise SLMTimeoutError(f"no answer within {request.timeout:.2f}s") from None
        except openai.APIConnectionError as err:
            raise SLMTransportError(f"cannot reach {self._client.base_url}: {err}") from None
        if not completion.choices:
            raise SLMOutputError("the endpoint returned no choices")
        message = completion.choices[0].message
        if message.refusal:
            raise SLMOutputError(f"the model refused: {message.refusal}")
        usage = completion.usage
        return ProviderReply(
            text=message.content or "",
            usage=Usage(usage.prompt_tokens, usage.completion_tokens) if usage else Usage(),
            mode=mode,
        )

    def _params(self, request: ProviderRequest, mode: str) -> dict[str, Any]:
        """Build the create() arguments for ``mode``."""
        stage = request.stage
        system = request.system
        if mode == "json_object" and request.schema is not None:
            system = _with_schema(system, request.schema)
        params: dict[str, Any] = {
            "model": request.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": request.user},
            ],
            "temperature": stage.temperature,
            "timeout": request.timeout,
            # Official OpenAI wants max_completion_tokens; compatible servers know max_tokens.
            ("max_tokens" if self._compatible else "max_completion_tokens"): (
                stage.max_output_tokens
            ),
        }
        if request.schema is not None:
            params["response_format"] = self._response_format(request.schema, mode)
        if stage.extra_body:
            params["extra_body"] = dict(stage.extra_body)
        return params

    def _response_format(self, schema: Any, mode: str) -> dict[str, Any]:
        """Return ``response_format`` for the mode."""
        if mode == "json_schema":
            spec = {"name": "result", "schema": schema, "strict": True}
            return {"type": "json_schema", "json_schema": spec}
        if self._compatible:
            return {"type": "json_object", "schema": schema}
        return {"type": "json_object"}

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await self._client.close()


class _SchemaModeRejected(Exception):
    """The endpoint refused ``response_format: json_schema`` (seen only while probing)."""


def _rejects_json_schema(err: openai.APIStatusError) -> bool:
    """Tell a refusal of the json_schema mode from other errors.

    vLLM and OpenAI answer 400; llama.cpp's Python server fails request validation with a
    500 whose message names ``response_format``. Auth, rate-limit and not-found errors are not
    mode refusals.
    """
    if err.status_code in (400, 422):
        return True
    text = str(err.message) + str(err.body)
    return err.status_code >= 500 and ("response_format" in text or "json_schema" in text)


def _with_schema(system: str, schema: Any) -> str:
    """Echo the schema in the prompt unless the caller already did."""
    if json.dumps(schema, separators=(",", ":")) in system:
        return system
    return f"{system.rstrip()}\n\n{schema_instruction(schema)}"


def _transport(err: openai.APIStatusError) -> SLMTransportError:
    """Describe an HTTP error answer, keeping the status and the server's message."""
    return SLMTransportError(f"the endpoint answered HTTP {err.status_code}: {err.message}")
