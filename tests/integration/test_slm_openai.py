"""The OpenAI-compatible path against a local server speaking chat completions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.slm_support.fake_server import (
    FakeProviderServer,
    Reply,
    chat_completion,
    openai_error,
)

from pipecat_steward.core.costing import UsageEvent
from pipecat_steward.exceptions import (
    SLMOutputError,
    SLMResolutionError,
    SLMTimeoutError,
    SLMTransportError,
)
from pipecat_steward.slm import (
    SessionIdentity,
    SLMClient,
    SLMStage,
    load_builtin_table,
    load_stack,
    resolve_stage,
)
from pipecat_steward.storage.ledger import MemoryLedger

pytest_plugins = ["tests.slm_support.fixtures"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
IDENTITY = SessionIdentity(tenant_id="t1", agent_id="a1", session_id="s1")


def stage_for(server: FakeProviderServer, stack: str = "openai", **config: Any) -> SLMStage:
    """Resolve a stage from a real stack manifest, overlaid to point at the fake server."""
    overlay = {"config": {"base_url": f"{server.base}/v1", **config}}
    return resolve_stage(
        table=load_builtin_table(), stack=load_stack(stack), overlay=overlay, identity=IDENTITY
    )


def body_of(server: FakeProviderServer, index: int = -1) -> dict[str, Any]:
    return server.requests_to("/chat/completions")[index].body


async def test_strict_json_schema_round_trip(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """A strict json_schema call returns the parsed object, usage and provider/model."""
    result = await slm_client.complete(
        stage_for(slm_server), SCHEMA, "sys", "user text", timeout=5, scope="extraction"
    )
    assert result.value == {"name": "Ada", "age": 36}
    assert result.raw_text == json.dumps({"name": "Ada", "age": 36})
    assert (result.usage.input_tokens, result.usage.output_tokens) == (42, 7)
    assert (result.provider, result.model, result.mode) == ("openai", "gpt-4o-mini", "json_schema")
    assert result.latency_ms > 0
    sent = body_of(slm_server)
    assert sent["response_format"]["type"] == "json_schema"
    spec = sent["response_format"]["json_schema"]
    assert spec["strict"] is True
    assert spec["schema"]["required"] == ["name", "age"]
    assert spec["schema"]["additionalProperties"] is False
    assert spec["schema"]["properties"]["age"]["type"] == ["integer", "null"]
    assert sent["messages"][0] == {"role": "system", "content": "sys"}
    assert sent["max_completion_tokens"] == 512


async def test_every_call_writes_a_usage_row(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """The usage row carries provider, model, tokens, latency, scope, stage id and identity."""
    await slm_client.complete(stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="adherence")
    (row,) = slm_ledger.events
    assert isinstance(row, UsageEvent)
    assert (row.provider, row.model, row.scope, row.outcome) == (
        "openai",
        "gpt-4o-mini",
        "adherence",
        "ok",
    )
    assert (row.input_tokens, row.output_tokens) == (42, 7)
    assert row.stage_id == "__logic_slm"
    assert (row.tenant_id, row.agent_id, row.session_id) == ("t1", "a1", "s1")
    assert row.latency_ms > 0 and row.at


async def test_configured_json_object_mode_echoes_schema(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """json_object mode sends the schema in response_format and echoes it in the prompt."""
    stage = stage_for(slm_server, "self-hosted", structured_mode="json_object")
    result = await slm_client.complete(stage, SCHEMA, "sys", "u", timeout=5, scope="extraction")
    assert result.mode == "json_object"
    sent = body_of(slm_server)
    assert sent["response_format"]["type"] == "json_object"
    assert sent["response_format"]["schema"]["required"] == ["name", "age"]
    assert '"additionalProperties":false' in sent["messages"][0]["content"]
    assert sent["max_tokens"] == 512


async def test_auto_mode_detects_rejection_once_and_remembers(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """A server that rejects json_schema is switched to json_object once, for good."""
    slm_server.queue(Reply(openai_error("response_format json_schema not supported"), status=400))
    stage = stage_for(slm_server, "self-hosted")
    assert stage.structured_mode == "auto"
    first = await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    second = await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    kinds = [s.body["response_format"]["type"] for s in slm_server.requests_to("/completions")]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert first.mode == second.mode == "json_object"


async def test_auto_mode_recognises_llama_cpp_refusal(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """llama.cpp's server refuses json_schema with a 500 naming response_format."""
    refusal = openai_error("literal_error ('body', 'response_format', 'type') json_schema")
    slm_server.queue(Reply(refusal, status=500))
    stage = stage_for(slm_server, "self-hosted")
    result = await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    assert result.mode == "json_object"


async def test_auto_mode_does_not_mistake_outages_for_refusals(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """A plain 500 or a 401 in auto mode is a transport error and the mode is not switched."""
    slm_server.queue(
        Reply(openai_error("boom"), status=500), Reply(openai_error("key"), status=401)
    )
    stage = stage_for(slm_server, "self-hosted")
    for _ in range(2):
        with pytest.raises(SLMTransportError):
            await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    kinds = [s.body["response_format"]["type"] for s in slm_server.seen]
    assert kinds == ["json_schema"] * 3


async def test_configured_json_schema_does_not_fall_back(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """Without auto mode a 400 is a transport error, not a silent mode switch."""
    slm_server.queue(Reply(openai_error("bad schema"), status=400))
    with pytest.raises(SLMTransportError, match="HTTP 400"):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )
    assert len(slm_server.seen) == 1


@pytest.mark.parametrize("status", [401, 429, 500, 503])
async def test_error_status_is_a_transport_error_without_retry(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger, status: int
) -> None:
    """4xx/5xx answers raise SLMTransportError at once (the SDK's retries are off)."""
    slm_server.queue(Reply(openai_error("nope"), status=status))
    with pytest.raises(SLMTransportError, match=f"HTTP {status}"):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="llm_judge"
        )
    assert len(slm_server.seen) == 1
    assert slm_ledger.events[0].outcome == "transport_error"


async def test_slow_answer_past_the_timeout(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """A response slower than the timeout raises SLMTimeoutError and is metered as such."""
    slm_server.queue(Reply(chat_completion("{}"), delay=1.0))
    with pytest.raises(SLMTimeoutError):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=0.2, scope="extraction"
        )
    assert slm_ledger.events[0].outcome == "timeout"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('{"name": "Ada", "age": ', "not valid JSON"),
        ('["Ada"]', "not an object"),
        ('{"name": "Ada", "age": "thirty"}', "at age"),
        ('{"name": "Ada", "age": 3, "extra": 1}', "Additional properties"),
        ('{"age": 3}', "'name' is a required property"),
    ],
)
async def test_invalid_output_is_a_typed_error(
    slm_server: FakeProviderServer,
    slm_client: SLMClient,
    slm_ledger: MemoryLedger,
    content: str,
    match: str,
) -> None:
    """Malformed or schema-invalid output raises SLMOutputError, never a half-parsed object."""
    slm_server.queue(Reply(chat_completion(content)))
    with pytest.raises(SLMOutputError, match=match):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )
    assert slm_ledger.events[0].outcome == "output_error"
    assert slm_ledger.events[0].input_tokens == 42  # the tokens were spent; the row says so


async def test_fenced_json_is_accepted(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """A small model's fenced object is unwrapped (the object itself is still validated)."""
    slm_server.queue(Reply(chat_completion('```json\n{"name": "Bo", "age": null}\n```')))
    result = await slm_client.complete(
        stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
    )
    assert result.value == {"name": "Bo", "age": None}


async def test_malformed_http_body_is_a_transport_error(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """A body that is not JSON at all is the endpoint's fault, reported as transport."""
    slm_server.queue(Reply("<html>gateway</html>"))
    with pytest.raises(SLMTransportError):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )


async def test_unreachable_endpoint(slm_client: SLMClient, unused_tcp_port: int) -> None:
    """Nothing listening is a transport error naming the endpoint."""
    overlay = {"config": {"base_url": f"http://127.0.0.1:{unused_tcp_port}/v1"}}
    stage = resolve_stage(table=load_builtin_table(), stack=load_stack("openai"), overlay=overlay)
    with pytest.raises(SLMTransportError):
        await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")


async def test_extra_body_passes_through(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """extra_body (vLLM guided-decoding options) reaches the request body unchanged."""
    stage = stage_for(slm_server, "self-hosted", extra_body={"guided_decoding_backend": "xgrammar"})
    await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    assert body_of(slm_server)["guided_decoding_backend"] == "xgrammar"


async def test_scope_model_override(slm_server: FakeProviderServer, slm_client: SLMClient) -> None:
    """A per-scope model override is the model sent for that scope only."""
    stage = stage_for(slm_server, scope_models={"adherence": "gpt-4.1-mini"})
    await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="adherence")
    await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="extraction")
    assert [s.body["model"] for s in slm_server.seen] == ["gpt-4.1-mini", "gpt-4o-mini"]


async def test_ledger_failure_never_fails_the_call(
    slm_server: FakeProviderServer, slm_env: None
) -> None:
    """A ledger that raises costs a log line, not the call."""

    class BrokenLedger:
        def record(self, event: UsageEvent) -> None:
            raise OSError("disk full")

    async with SLMClient(ledger=BrokenLedger()) as client:
        result = await client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )
    assert result.value["name"] == "Ada"


async def test_missing_api_key(
    slm_server: FakeProviderServer, slm_client: SLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI without its key is a resolution error naming the variable."""
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(SLMResolutionError, match="OPENAI_API_KEY"):
        await slm_client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )


async def test_cancellation_propagates_and_is_metered(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """A caller that cancels gets CancelledError (not an SLMError); the row says cancelled."""
    slm_server.queue(Reply(chat_completion("{}"), delay=1.0))
    task = asyncio.create_task(
        slm_client.complete(stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="adherence")
    )
    while not slm_server.seen:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slm_ledger.events[0].outcome == "cancelled"


async def test_a_client_opened_for_one_call_completes_and_closes(
    slm_server: FakeProviderServer, slm_env: None
) -> None:
    """A short script opens a client for its call (no long-lived client needed)."""
    async with SLMClient() as client:
        result = await client.complete(
            stage_for(slm_server), SCHEMA, "s", "u", timeout=5, scope="extraction"
        )
    assert result.value == {"name": "Ada", "age": 36}
