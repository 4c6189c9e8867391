"""The unified judge: strict {"allow": bool} on the ladder path; ALLOW/DENY only without a stage."""

from __future__ import annotations

import json

import pytest
from tests.slm_support.fake_server import FakeProviderServer, Reply, chat_completion

from pipecat_steward.exceptions import SLMOutputError, SLMResolutionError
from pipecat_steward.slm import (
    SLMClient,
    SLMStage,
    evaluate_judge,
    load_builtin_table,
    load_stack,
    resolve_stage,
)
from pipecat_steward.storage.ledger import MemoryLedger

pytest_plugins = ["tests.slm_support.fixtures"]


def stage_for(server: FakeProviderServer) -> SLMStage:
    overlay = {"config": {"base_url": f"{server.base}/v1"}}
    return resolve_stage(table=load_builtin_table(), stack=load_stack("openai"), overlay=overlay)


@pytest.mark.parametrize("allow", [True, False])
async def test_ladder_judge_uses_the_strict_allow_schema(
    slm_server: FakeProviderServer, slm_client: SLMClient, slm_ledger: MemoryLedger, allow: bool
) -> None:
    slm_server.queue(Reply(chat_completion(json.dumps({"allow": allow}))))
    evidence = {"caller": "yes, charge my card", "verified": True}
    verdict = await evaluate_judge(
        stage_for(slm_server), "The caller consented to the charge.", evidence, client=slm_client
    )
    assert verdict is allow
    body = slm_server.seen[0].body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema == {
        "type": "object",
        "properties": {"allow": {"type": "boolean"}},
        "required": ["allow"],
        "additionalProperties": False,
    }
    assert '"verified": true' in body["messages"][1]["content"]
    assert slm_ledger.events[0].scope == "llm_judge"


async def test_ladder_judge_rejects_a_verdict_without_allow(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    slm_server.queue(Reply(chat_completion('{"verdict": "ALLOW"}')))
    with pytest.raises(SLMOutputError):
        await evaluate_judge(stage_for(slm_server), "cond", "evidence", client=slm_client)


async def test_ladder_judge_never_uses_words(
    slm_server: FakeProviderServer, slm_client: SLMClient
) -> None:
    """With a stage, a bare ALLOW is not JSON and is an output error, not a yes."""
    slm_server.queue(Reply(chat_completion("ALLOW")))
    with pytest.raises(SLMOutputError):
        await evaluate_judge(stage_for(slm_server), "cond", "evidence", client=slm_client)


@pytest.mark.parametrize(("word", "allow"), [("ALLOW", True), ("DENY.", False), ("allow", True)])
async def test_legacy_word_protocol_only_without_a_stage(
    slm_server: FakeProviderServer,
    slm_client: SLMClient,
    slm_ledger: MemoryLedger,
    monkeypatch: pytest.MonkeyPatch,
    word: str,
    allow: bool,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{slm_server.base}/v1")
    slm_server.queue(Reply(chat_completion(word)))
    assert await evaluate_judge(None, "cond", "evidence", client=slm_client) is allow
    body = slm_server.seen[0].body
    assert "response_format" not in body and body["model"] == "gpt-4o-mini"
    assert "exactly one word: ALLOW" in body["messages"][0]["content"]
    assert slm_ledger.events[0].scope == "llm_judge"


async def test_legacy_ambiguous_answer(
    slm_server: FakeProviderServer, slm_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{slm_server.base}/v1")
    slm_server.queue(Reply(chat_completion("ALLOW or DENY, hard to say")))
    with pytest.raises(SLMOutputError, match="not one of ALLOW/DENY"):
        await evaluate_judge(None, "cond", "evidence")


async def test_legacy_without_key_names_both_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SLMResolutionError, match="OPENAI_API_KEY.*aux.logic_slm|aux.logic_slm"):
        await evaluate_judge(None, "cond", "evidence")
