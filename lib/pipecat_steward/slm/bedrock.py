"""Amazon Bedrock through ``boto3``'s Converse API.

Two ways to get structure, chosen by ``bedrock_mode``: ``tool`` forces a single tool whose
input schema is ours (works on every Converse model with tool use, e.g. Nova Micro), and
``output_config`` uses Converse's ``outputConfig`` JSON-schema text format. boto3 is
synchronous, so the call runs in a worker thread; botocore's own timeouts are set to the
stage's and its retries are off, and the client's ``asyncio.timeout`` stays the hard bound.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import boto3.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

from pipecat_steward.exceptions import SLMOutputError, SLMTimeoutError, SLMTransportError
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.result import ProviderReply, ProviderRequest, Usage

__all__ = ["TOOL_NAME", "BedrockProvider"]

TOOL_NAME = "emit_result"
"""The forced tool's name in ``tool`` mode."""


class BedrockProvider:
    """One Bedrock runtime endpoint (a region, or ``base_url`` as ``endpoint_url``)."""

    def __init__(self, stage: SLMStage) -> None:
        config = Config(
            connect_timeout=stage.timeout_s,
            read_timeout=stage.timeout_s,
            retries={"total_max_attempts": 1, "mode": "standard"},
        )
        self._client: Any = boto3.session.Session().client(
            "bedrock-runtime",
            region_name=stage.region,
            endpoint_url=stage.base_url,
            config=config,
        )

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        """Run the Converse call in a worker thread."""
        return await asyncio.to_thread(self._converse, request)

    def _converse(self, request: ProviderRequest) -> ProviderReply:
        """Make the blocking Converse call and read the structured part of the answer."""
        mode = "text" if request.schema is None else request.stage.bedrock_mode
        try:
            response = self._client.converse(**_params(request, mode))
        except ClientError as err:
            status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
            raise SLMTransportError(f"the endpoint answered HTTP {status}: {err}") from None
        except ReadTimeoutError:
            raise SLMTimeoutError(f"no answer within {request.timeout:.2f}s") from None
        except BotoCoreError as err:
            raise SLMTransportError(f"cannot reach Bedrock: {err}") from None
        usage = response.get("usage", {})
        return ProviderReply(
            text=_text(response, mode),
            usage=Usage(usage.get("inputTokens", 0), usage.get("outputTokens", 0)),
            mode=mode,
        )

    async def aclose(self) -> None:
        """Close the botocore connection pool."""
        self._client.close()


def _params(request: ProviderRequest, mode: str) -> dict[str, Any]:
    """Build the Converse arguments for ``mode``."""
    stage = request.stage
    params: dict[str, Any] = {
        "modelId": request.model,
        "system": [{"text": request.system}],
        "messages": [{"role": "user", "content": [{"text": request.user}]}],
        "inferenceConfig": {
            "maxTokens": stage.max_output_tokens,
            "temperature": stage.temperature,
        },
    }
    if mode == "tool":
        spec = {
            "name": TOOL_NAME,
            "description": "Return the result as this tool's input.",
            "inputSchema": {"json": request.schema},
        }
        params["toolConfig"] = {
            "tools": [{"toolSpec": spec}],
            "toolChoice": {"tool": {"name": TOOL_NAME}},
        }
    elif mode == "output_config":
        structure = {"jsonSchema": {"name": "result", "schema": json.dumps(request.schema)}}
        params["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": structure}}
    return params


def _text(response: dict[str, Any], mode: str) -> str:
    """Return the forced tool's input as JSON text, or the answer's text."""
    content = response.get("output", {}).get("message", {}).get("content", [])
    if mode == "tool":
        uses = [part["toolUse"] for part in content if "toolUse" in part]
        if not uses:
            raise SLMOutputError(f"the model did not call {TOOL_NAME} (forced tool use)")
        return json.dumps(uses[0].get("input"))
    text = "".join(part.get("text", "") for part in content)
    if not text:
        raise SLMOutputError("the model returned no text")
    return text
