"""Google's Gemini API through ``google-genai`` (``response_schema`` structured output).

The schema is sent as Gemini's OpenAPI-subset ``response_schema`` with
``response_mime_type="application/json"``. The SDK's own retries are off: the caller's timeout
is the whole budget. We hand the SDK our own ``httpx2`` async client (its own HTTP library) so
the connection pool's lifetime is ours to close, rather than the SDK's per-loop aiohttp
sessions. :mod:`pipecat_steward.slm.vertex` reuses this module with
``vertexai=True``.
"""

from __future__ import annotations

import os
from typing import Any

import httpx2
from google import genai
from google.genai import errors, types

from pipecat_steward.exceptions import SLMOutputError, SLMResolutionError, SLMTransportError
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.result import ProviderReply, ProviderRequest, Usage
from pipecat_steward.slm.schemas import gemini_schema

__all__ = ["GoogleProvider", "http_options"]


def http_options(stage: SLMStage, http: httpx2.AsyncClient) -> types.HttpOptions:
    """Return the SDK's HTTP options: base URL, timeout, our HTTP client, no SDK retries."""
    return types.HttpOptions(
        base_url=stage.base_url,
        timeout=int(stage.timeout_s * 1000),
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_async_client=http,
    )


class GoogleProvider:
    """One Gemini API endpoint."""

    def __init__(self, stage: SLMStage) -> None:
        # A client that fails to build below never opened a socket, so nothing leaks.
        self._http = httpx2.AsyncClient(timeout=stage.timeout_s)
        self._client = self._make_client(stage, http_options(stage, self._http))

    def _make_client(self, stage: SLMStage, options: types.HttpOptions) -> genai.Client:
        """Build the SDK client with an API key from the stage's environment variable."""
        env = stage.api_key_env or "GEMINI_API_KEY"
        key = os.environ.get(env)
        if not key:
            raise SLMResolutionError(f"logic_slm (google): environment variable {env} is not set")
        return genai.Client(api_key=key, http_options=options)

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Call ``generateContent`` asking for JSON shaped by the schema."""
        try:
            response = await self._client.aio.models.generate_content(
                model=request.model, contents=request.user, config=_config(request)
            )
        except errors.APIError as err:
            raise SLMTransportError(
                f"the endpoint answered HTTP {err.code}: {err.message}"
            ) from None
        return _reply(response, "json_schema" if request.schema is not None else "text")

    async def aclose(self) -> None:
        """Close our HTTP client and the SDK's (unused) sync one."""
        await self._http.aclose()
        self._client.close()


def _config(request: ProviderRequest) -> types.GenerateContentConfig:
    """Build the generation config for one request."""
    stage = request.stage
    extra: dict[str, Any] = {}
    if request.schema is not None:
        extra = {
            "response_mime_type": "application/json",
            "response_schema": gemini_schema(request.schema),
        }
    return types.GenerateContentConfig(
        system_instruction=request.system,
        temperature=stage.temperature,
        max_output_tokens=stage.max_output_tokens,
        **extra,
    )


def _reply(response: types.GenerateContentResponse, mode: str) -> ProviderReply:
    """Read text and usage; a blocked or empty answer is an output error."""
    candidates = response.candidates or []
    parts = (candidates[0].content.parts or []) if candidates and candidates[0].content else []
    text = "".join(part.text or "" for part in parts if not part.thought)
    if not text:
        reason = candidates[0].finish_reason if candidates else None
        raise SLMOutputError(f"the model returned no text (finish reason: {reason})")
    meta = response.usage_metadata
    usage = Usage(
        (meta.prompt_token_count or 0) if meta else 0,
        (meta.candidates_token_count or 0) if meta else 0,
    )
    return ProviderReply(text=text, usage=usage, mode=mode)
