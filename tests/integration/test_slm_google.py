"""google-genai (Gemini API and Vertex) against a local server via ``http_options`` base URL."""

from __future__ import annotations

import json
import re
from typing import Any

import google.auth
import google.oauth2.credentials
import pytest
from tests.slm_support.fake_server import (
    FakeProviderServer,
    Reply,
    gemini_response,
    google_error,
)

from pipecat_steward.exceptions import SLMOutputError, SLMTimeoutError, SLMTransportError
from pipecat_steward.slm import SLMClient, SLMStage, load_builtin_table, load_stack, resolve_stage
from pipecat_steward.storage.ledger import MemoryLedger

pytest_plugins = ["tests.slm_support.fixtures"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "caller's name"},
        "party": {"type": "integer"},
        "seating": {"enum": ["inside", "outside"]},
    },
    "required": ["name"],
}
VALID = json.dumps({"name": "Ada", "party": 2, "seating": None})


def google_stage(server: FakeProviderServer, stack: str = "google", **config: Any) -> SLMStage:
    overlay = {"config": {"base_url": server.base, **config}}
    return resolve_stage(table=load_builtin_table(), stack=load_stack(stack), overlay=overlay)


async def test_gemini_response_schema_round_trip(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger
) -> None:
    """generateContent gets a JSON mime type and an OpenAPI-subset response_schema."""
    value = {"name": "Ada", "party": None, "seating": "inside"}
    slm_server.queue(Reply(gemini_response(json.dumps(value), 31, 6)))
    result = await slm_client.complete(
        google_stage(slm_server), SCHEMA, "sys", "user", timeout=5, scope="extraction"
    )
    assert result.value == value
    assert (result.provider, result.model) == ("google", "gemini-2.5-flash-lite")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (31, 6)
    (seen,) = slm_server.seen
    assert re.fullmatch(r"/v1(beta)?/models/gemini-2.5-flash-lite:generateContent", seen.path)
    assert seen.headers["x-goog-api-key"] == "gemini-test-dummy"
    config = seen.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["required"] == ["name", "party", "seating"]
    assert schema["properties"]["party"] == {"type": "INTEGER", "nullable": True}
    assert schema["properties"]["seating"]["enum"] == ["inside", "outside"]
    assert seen.body["systemInstruction"]["parts"][0]["text"] == "sys"
    assert slm_ledger.events[0].provider == "google"


@pytest.mark.parametrize(("status", "reason"), [(400, "INVALID_ARGUMENT"), (503, "UNAVAILABLE")])
async def test_gemini_error_status(
    slm_server: FakeProviderServer, slm_client: SLMClient, status: int, reason: str
) -> None:
    """Error answers are transport errors with the status, tried once."""
    slm_server.queue(Reply(google_error(status, "nope", reason), status=status))
    with pytest.raises(SLMTransportError, match=f"HTTP {status}"):
        await slm_client.complete(
            google_stage(slm_server), SCHEMA, "s", "u", timeout=5, scope="adherence"
        )
    assert len(slm_server.seen) == 1


async def test_gemini_slow_answer(slm_server: FakeProviderServer, slm_client: SLMClient) -> None:
    """A slow answer past the hard timeout raises SLMTimeoutError."""
    slm_server.queue(Reply(gemini_response("{}"), delay=1.0))
    with pytest.raises(SLMTimeoutError):
        await slm_client.complete(
            google_stage(slm_server), SCHEMA, "s", "u", timeout=0.2, scope="adherence"
        )


async def test_gemini_invalid_output(slm_server: FakeProviderServer, slm_client: SLMClient) -> None:
    """Schema-invalid JSON from Gemini is an output error."""
    slm_server.queue(Reply(gemini_response('{"name": 5, "party": null, "seating": null}')))
    with pytest.raises(SLMOutputError, match="at name"):
        await slm_client.complete(
            google_stage(slm_server), SCHEMA, "s", "u", timeout=5, scope="adherence"
        )


async def test_vertex_express_mode(
    slm_server: FakeProviderServer, slm_client: SLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vertex with an API key (express mode) calls the publisher model path."""
    monkeypatch.setenv("VERTEX_KEY", "vertex-test-dummy")
    slm_server.queue(Reply(gemini_response(VALID)))
    stage = google_stage(slm_server, "vertex", api_key_env="VERTEX_KEY")
    result = await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="llm_judge")
    assert result.provider == "vertex"
    (seen,) = slm_server.seen
    assert seen.path.endswith("publishers/google/models/gemini-2.5-flash-lite:generateContent")
    assert seen.body["generationConfig"]["responseSchema"]["type"] == "OBJECT"


async def test_vertex_project_mode_with_application_default_credentials(
    slm_server: FakeProviderServer, slm_client: SLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project/location mode authenticates with ADC and calls the project's model path.

    ADC is replaced by an already-minted access token (google-auth pins the refresh endpoint
    of user credentials to Google's, which a test must never reach).
    """
    token = google.oauth2.credentials.Credentials(token="fake-token")
    monkeypatch.setattr(google.auth, "default", lambda *a, **k: (token, "demo-project"))
    slm_server.queue(Reply(gemini_response(VALID)))
    stage = google_stage(slm_server, "vertex", project="demo-project")
    await slm_client.complete(stage, SCHEMA, "s", "u", timeout=5, scope="adherence")
    (call,) = slm_server.seen
    assert "/projects/demo-project/locations/us-central1/publishers/google/models/" in call.path
    assert call.headers["Authorization"] == "Bearer fake-token"
