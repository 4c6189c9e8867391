"""The real self-hosted tier: structured extraction from SmolLM2 on llama.cpp's server.

Runs whenever ``scripts/test`` runs. ``STEWARD_SKIP_LOCAL_LLM=1`` skips it in quick local
loops only, and says so; a missing install is a failure, not a skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.slm_support.local_llm import MODEL_ALIAS, SKIP_ENV, llama_server, missing_parts

from pipecat_steward.slm import (
    SessionIdentity,
    SLMClient,
    compose_system,
    load_builtin_table,
    load_stack,
    resolve_stage,
    strict_schema,
    validate_result,
)
from pipecat_steward.storage.ledger import SQLiteLedger

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(
        os.environ.get(SKIP_ENV) == "1",
        reason=f"{SKIP_ENV}=1: local llama.cpp tier skipped (quick loops only; scripts/test runs it)",
    ),
]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the caller's first name"},
        "party_size": {"type": "integer", "description": "how many people"},
    },
}


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The llama.cpp server on 127.0.0.1, up for this module's tests, then stopped."""
    missing = missing_parts()
    if missing:
        pytest.fail(
            f"local LLM tier not installed: {', '.join(missing)}; run scripts/setup --local-llm"
        )
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


async def test_structured_extraction_through_the_fallback_mode(
    llama_url: str, tmp_path: Path
) -> None:
    """Auto mode meets the real refusal of json_schema, falls back, and returns valid JSON."""
    overlay = {"config": {"base_url": llama_url, "model": MODEL_ALIAS, "timeout_s": 120}}
    identity = SessionIdentity(tenant_id="local", agent_id="bella", session_id="call-1")
    stage = resolve_stage(
        table=load_builtin_table(),
        stack=load_stack("self-hosted"),
        overlay=overlay,
        identity=identity,
    )
    assert stage.structured_mode == "auto"
    system = compose_system(stage.prompts["extraction"], strict_schema(SCHEMA))
    user = "Latest caller utterance: Hi, this is Maria, a table for four please."
    with SQLiteLedger(tmp_path / "usage.sqlite") as ledger:
        async with SLMClient(ledger=ledger) as client:
            result = await client.complete(
                stage, SCHEMA, system, user, timeout=120, scope="extraction"
            )
        ledger.flush()
        rows = ledger.events()
    validate_result(result.value, strict_schema(SCHEMA))
    assert set(result.value) == {"name", "party_size"}
    assert result.mode == "json_object"
    assert result.provider == "openai_compatible" and result.model == MODEL_ALIAS
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    (row,) = rows
    assert (row.provider, row.model, row.scope, row.outcome) == (
        "openai_compatible",
        MODEL_ALIAS,
        "extraction",
        "ok",
    )
    assert (row.tenant_id, row.session_id, row.stage_id) == ("local", "call-1", "__logic_slm")
    assert row.input_tokens == result.usage.input_tokens
