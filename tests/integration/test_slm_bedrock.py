"""Bedrock Converse through boto3 against a local ``endpoint_url`` speaking the Converse REST shape."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import unquote

import boto3.session
import pytest
from tests.slm_support.fake_server import (
    FakeProviderServer,
    Reply,
    converse_text_response,
    converse_tool_response,
)

from pipecat_steward.exceptions import SLMOutputError, SLMTimeoutError, SLMTransportError
from pipecat_steward.slm import SLMClient, SLMStage, load_builtin_table, load_stack, resolve_stage
from pipecat_steward.storage.ledger import MemoryLedger

pytest_plugins = ["tests.slm_support.fixtures"]

DEADLINE = 0.6
"""A first call's deadline, in seconds, in the test of making the SDK's client."""

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "boolean"}, "why": {"type": "string"}},
    "required": ["allow"],
}


def bedrock_stage(server: FakeProviderServer, **config: Any) -> SLMStage:
    overlay = {"config": {"base_url": server.base, **config}}
    return resolve_stage(table=load_builtin_table(), stack=load_stack("bedrock"), overlay=overlay)


async def test_forced_tool_use_round_trip(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """Tool mode forces one tool whose input schema is ours; its input is the result."""
    slm_server.queue(Reply(converse_tool_response({"allow": True, "why": None}, 25, 9)))
    result = await slm_client.complete(
        bedrock_stage(slm_server), SCHEMA, "sys", "user", timeout=5, scope="llm_judge"
    )
    assert result.value == {"allow": True, "why": None}
    assert (result.provider, result.model, result.mode) == (
        "bedrock",
        "amazon.nova-micro-v1:0",
        "tool",
    )
    (seen,) = slm_server.seen
    assert unquote(seen.path) == "/model/amazon.nova-micro-v1:0/converse"
    assert seen.headers["Authorization"].startswith("AWS4-HMAC-SHA256")
    tool = seen.body["toolConfig"]
    assert tool["toolChoice"] == {"tool": {"name": "emit_result"}}
    schema = tool["tools"][0]["toolSpec"]["inputSchema"]["json"]
    assert schema["required"] == ["allow", "why"] and schema["additionalProperties"] is False
    assert seen.body["system"] == [{"text": "sys"}]
    assert seen.body["inferenceConfig"] == {"maxTokens": 512, "temperature": 0.0}
    row = slm_ledger.events[0]
    assert (row.provider, row.input_tokens, row.output_tokens) == ("bedrock", 25, 9)


async def test_output_config_mode(slm_server: FakeProviderServer, slm_client: SLMClient) -> None:
    """outputConfig mode sends the JSON schema as text format and reads the text answer."""
    slm_server.queue(Reply(converse_text_response('{"allow": false, "why": "no id"}')))
    stage = bedrock_stage(slm_server, bedrock_mode="output_config")
    result = await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="llm_judge")
    assert result.value == {"allow": False, "why": "no id"}
    fmt = slm_server.seen[0].body["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema"
    assert json.loads(fmt["structure"]["jsonSchema"]["schema"])["required"] == ["allow", "why"]


async def test_model_that_skips_the_tool(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """A text answer where the tool was forced is an output error."""
    slm_server.queue(Reply(converse_text_response("sure!")))
    with pytest.raises(SLMOutputError, match="did not call emit_result"):
        await slm_client.complete(
            bedrock_stage(slm_server), SCHEMA, "s", "u", timeout=5, scope="llm_judge"
        )


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "ValidationException"), (500, "InternalServerException")]
)
async def test_error_status(
    slm_server: FakeProviderServer, slm_client: SLMClient, status: int, kind: str
) -> None:
    """Error answers are transport errors, tried once (botocore retries are off)."""
    headers = {"x-amzn-ErrorType": kind}
    slm_server.queue(Reply({"message": "nope"}, status=status, headers=headers))
    with pytest.raises(SLMTransportError, match=f"HTTP {status}"):
        await slm_client.complete(
            bedrock_stage(slm_server), SCHEMA, "s", "u", timeout=5, scope="llm_judge"
        )
    assert len(slm_server.seen) == 1


async def test_slow_answer(slm_server: FakeProviderServer, slm_client: SLMClient) -> None:
    """The hard timeout holds even though boto3 blocks a worker thread."""
    slm_server.queue(Reply(converse_tool_response({"allow": True}), delay=1.0))
    with pytest.raises(SLMTimeoutError):
        await slm_client.complete(
            bedrock_stage(slm_server), SCHEMA, "s", "u", timeout=0.2, scope="llm_judge"
        )


async def test_a_first_call_is_not_timed_out_by_building_its_client(
    slm_server: FakeProviderServer,
    slm_client: SLMClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making the SDK's client (boto3 loads its service models from disk) is no part of a call.

    It happens once per endpoint, off the event loop and before the call's deadline starts: a
    first call with a deadline shorter than that still answers, and the loop keeps running.
    The answer itself takes milliseconds; the deadline leaves it most of a second, so a pause
    of the whole process (a full garbage collection of a large test run's heap) does not decide
    the outcome, while making the client takes twice the deadline.
    """
    make = boto3.session.Session.client

    def slow_client(self: boto3.session.Session, *args: Any, **kwargs: Any) -> Any:
        time.sleep(2 * DEADLINE)  # a cold disk, a loaded machine
        return make(self, *args, **kwargs)

    monkeypatch.setattr(boto3.session.Session, "client", slow_client)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    slm_server.queue(Reply(converse_tool_response({"allow": True, "why": None}, 3, 2)))
    try:
        result = await slm_client.complete(
            bedrock_stage(slm_server), SCHEMA, "sys", "user", timeout=DEADLINE, scope="llm_judge"
        )
    finally:
        ticker.cancel()
    assert result.value == {"allow": True, "why": None}
    # Made on the loop, the client would leave it one tick; made off it, about one per 10 ms.
    assert ticks >= 30, "the event loop stalled while the client was made"
