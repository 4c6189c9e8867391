"""``steward studio --text`` over HTTP, without a browser: a turn, a slow model, Ctrl-C.

The studio runs as a user starts it, against a local OpenAI-compatible fake.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.browser_support.process import studio

from pipecat_steward.testing.script import Call, Say
from pipecat_steward.testing.servers import ChatCompletionsServer

NO_SLM = {"STEWARD_MONITOR_ENABLED": "0"}


def _post(url: str, text: str) -> tuple[int, Any]:
    body = json.dumps({"text": text}).encode()
    request = urllib.request.Request(
        f"{url}api/say", data=body, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


async def test_a_typed_line_runs_a_turn_and_its_events_are_stored(tmp_path: Path) -> None:
    charge = Call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    script = [Say("Welcome to Riverside Clinic."), charge, Say("I need to verify you first.")]
    async with ChatCompletionsServer(script) as llm:
        env = {"STEWARD_LLM_BASE_URL": llm.base_url, "STEWARD_LLM_MODEL": "fake", **NO_SLM}
        async with studio(["--text"], env, tmp_path / "text.log") as url:
            session = (await asyncio.to_thread(_get, f"{url}api/config"))["session"]
            status, _ = await asyncio.to_thread(_post, url, "Just charge me now")
            assert status == 200
            events = await asyncio.to_thread(_get, f"{url}api/sessions/{session}/events")
            listed = await asyncio.to_thread(_get, f"{url}api/sessions")
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "call_started"
    turn = kinds[kinds.index("caller_transcript") :]
    assert turn.index("gate") < turn.index("bot_utterance"), "vetoed, then the bot answered"
    gate = next(e for e in events if e["kind"] == "gate")
    assert (gate["tool"], gate["decision"]) == ("collect_payment", "veto")
    assert listed[0]["id"] == session and listed[0]["live"]


async def test_a_slow_model_fails_the_turn_not_the_studio_and_ctrl_c_still_stops_it(
    tmp_path: Path,
) -> None:
    slow = Say(" ".join(["word"] * 200))
    async with ChatCompletionsServer([slow] * 8, token_delay=0.2) as llm:
        env = {"STEWARD_LLM_BASE_URL": llm.base_url, "STEWARD_LLM_MODEL": "fake", **NO_SLM}
        args = ["--text", "--turn-timeout", "2"]
        started = time.monotonic()
        async with studio(args, env, tmp_path / "slow.log") as url:
            status, reply = await asyncio.to_thread(_post, url, "Hello?")
            assert status == 504 and "in time" in reply["detail"]
        assert time.monotonic() - started < 60, "Ctrl-C stopped the studio within its bound"
