"""The studio in a real browser: the clinic played through ``--text``, then replayed from the store.

Headless Chromium (Debian's package) drives the page over the DevTools protocol. The agent's LLM
is a local OpenAI-compatible fake that answers from the caller's words, and the logic_slm is a
scripted local server, so the real pipeline, the real monitor and extractor and the real studio
process run offline. Screenshots of each state are saved under the test's tmp dir (the path is
printed).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.browser_support import Browser, chromium
from tests.browser_support.process import CLINIC, REPO, studio

from pipecat_steward.testing.script import Call, Say, Step
from pipecat_steward.testing.scripted_slm import ScriptedSLM, SLMRequest, verdict
from pipecat_steward.testing.servers import ChatCompletionsServer

CHROMIUM = chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium "
    "chromium-driver; scripts/setup installs it): the studio's browser tests need it",
)

VETO = '#log li[data-kind="gate"][data-decision="veto"]'
IDENTITY_DONE = '#checklist li[data-step="lookup_patient"][data-state="done"]'
CORRECTED = '#slots tr[data-slot="date_of_birth"][data-corrected="true"]'

# The caller's words and the model's answers. The identity lookup (find_patient, which
# completes the clinic's lookup_patient step) succeeds on the corrected date of birth.
CALLER = (
    "Hi, just charge me now, I'm in a hurry",
    "It's Ada Lovelace, born December 1st 1990",
    "Sorry, I mean December 10th 1990",
)
ANSWERS: tuple[tuple[str, Step], ...] = (
    ("charge me now", Call("collect_payment", {"patient_id": "pat-1815", "amount": 40})),
    ("december 1st", Say("Thank you, Ada. Let me find your record.")),
    (
        "december 10th",
        Call("find_patient", {"name": "Ada Lovelace", "date_of_birth": "1990-12-10"}),
    ),
)
AFTER_TOOL = {
    "collect_payment": "I need to verify you first. What's your full name and date of birth?",
    "find_patient": "Found you, Ada. Your next visit is July 14th with Dr. Byron.",
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, Mapping))


def answer(body: Mapping[str, Any]) -> Step:
    """The agent model: answer the latest caller line, or follow up on a tool's result."""
    messages = list(body.get("messages", []))
    if messages and messages[-1].get("role") == "tool":
        calls = [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]
        name = calls[-1]["tool_calls"][-1]["function"]["name"] if calls else ""
        return Say(AFTER_TOOL.get(name, "Okay."))
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    line = users[-1].lower() if users else ""
    return next((step for key, step in ANSWERS if key in line), Say("How can I help today?"))


def slm_answer(request: SLMRequest) -> dict[str, Any]:
    """The logic_slm: extract name and date of birth from the caller's latest mention."""
    if request.kind == "adherence":
        return verdict()
    if request.kind == "llm_judge":
        return {"allow": False}
    found = dict.fromkeys((request.schema or {}).get("properties", {}))
    said = request.user.lower()
    if "patient_name" in found and "ada lovelace" in said:
        found["patient_name"] = "Ada Lovelace"
    if "date_of_birth" in found and "december 1" in said:
        tenth = said.rfind("december 10th") >= said.rfind("december 1st")
        found["date_of_birth"] = "1990-12-10" if tenth else "1990-12-01"
    return found


async def say(browser: Browser, text: str) -> None:
    """Type ``text`` as the caller and send it; wait until the studio answered."""
    before = int(await browser.eval("Number(document.body.dataset.said || 0)"))
    await browser.eval(
        f"(() => {{ document.getElementById('line').value = {text!r};"
        " document.getElementById('say').requestSubmit(); return true; })()"
    )
    await browser.wait_for(f"Number(document.body.dataset.said || 0) > {before}", timeout=60)


async def count(browser: Browser, selector: str) -> int:
    return int(await browser.eval(f"document.querySelectorAll({selector!r}).length"))


async def assert_the_three_states(browser: Browser, shots: Path, prefix: str) -> None:
    """The veto in the event log, the identity step done, the corrected slot on the board."""
    await browser.wait_for(f"!!document.querySelector({VETO!r})")
    await browser.wait_for(f"!!document.querySelector({IDENTITY_DONE!r})")
    await browser.wait_for(f"!!document.querySelector({CORRECTED!r})")
    veto = await browser.eval(f"document.querySelector({VETO!r}).textContent")
    assert "collect_payment" in veto
    was = await browser.eval(f"document.querySelector({CORRECTED!r}).textContent")
    assert "1990-12-10" in was and "was 1990-12-01" in was
    # Vetoes and corrections are log entries, never spoken bubbles.
    bubbles = await browser.eval("document.getElementById('transcript').textContent")
    assert "veto" not in bubbles.lower()
    await browser.screenshot(shots / f"{prefix}-end.png")


async def test_studio_text_call_then_replay_from_the_store(tmp_path: Path) -> None:
    shots = tmp_path / "screenshots"
    shots.mkdir()
    print(f"\nstudio screenshots: {shots}")
    store = f"sqlite:{tmp_path / 'events.sqlite'}"
    async with (
        ChatCompletionsServer([answer] * 64) as llm,
        ScriptedSLM(answer=slm_answer) as slm,
    ):
        env = {
            "STEWARD_LLM_BASE_URL": llm.base_url,
            "STEWARD_LLM_MODEL": "fake-agent",
            "OPENAI_API_KEY": "test",
            "OPENAI_BASE_URL": slm.base_url,
            "STEWARD_LEDGER": str(tmp_path / "usage.sqlite"),
        }
        async with (
            studio(["--text", "--store", store], env, tmp_path / "text.log") as url,
            Browser(CHROMIUM or "", failures=shots / "text-failed.png") as browser,
        ):
            await browser.goto(url)
            assert await browser.eval("document.getElementById('mode').textContent") == "text"
            await say(browser, CALLER[0])
            await browser.wait_for(f"!!document.querySelector({VETO!r})")
            await browser.screenshot(shots / "text-1-veto.png")
            assert await count(browser, IDENTITY_DONE) == 0
            await say(browser, CALLER[1])
            await say(browser, CALLER[2])
            await browser.wait_for(f"!!document.querySelector({IDENTITY_DONE!r})")
            await browser.screenshot(shots / "text-2-identity-done.png")
            await assert_the_three_states(browser, shots, "text")
            session = await browser.eval("document.getElementById('sessions').value")
            assert session.startswith("text-")
            assert slm.of_kind("extraction"), "the extractor was attached as in production"
    replay = ["--replay", session, "--store", store]
    async with (
        studio(replay, {}, tmp_path / "replay.log") as url,
        Browser(CHROMIUM or "", failures=shots / "replay-failed.png") as browser,
    ):
        await browser.goto(url)
        assert await browser.eval("document.getElementById('mode').textContent") == "replay"
        assert await count(browser, VETO) == 0, "a replay starts at the first event"
        await browser.screenshot(shots / "replay-0-start.png")
        await step_until(browser, VETO)
        assert await count(browser, IDENTITY_DONE) == 0, "the replay steps in order"
        await browser.screenshot(shots / "replay-1-veto.png")
        await browser.eval("document.getElementById('last').click() || true")
        await assert_the_three_states(browser, shots, "replay")


async def step_until(browser: Browser, selector: str) -> None:
    """Press the step button until ``selector`` shows (at most once per event)."""
    total = int(await browser.eval("studio.events.length"))
    for _ in range(total):
        if await count(browser, selector):
            return
        await browser.eval("document.getElementById('step').click() || true")
    raise AssertionError(f"{selector} never showed while stepping through the replay")


async def test_studio_replays_a_simulate_trace(tmp_path: Path) -> None:
    trace = tmp_path / "appointment.jsonl"
    done = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "simulate",
        str(CLINIC),
        str(CLINIC / "scenarios" / "appointment_to_payment.yaml"),
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=REPO,
    )
    out, _ = await done.communicate()
    trace.write_bytes(out)
    async with (
        studio(["--replay", str(trace)], {}, tmp_path / "replay.log") as url,
        Browser(CHROMIUM or "", failures=tmp_path / "trace-failed.png") as browser,
    ):
        await browser.goto(url)
        assert await browser.eval("document.getElementById('sessions').value") == (
            "trace-appointment"
        )
        await browser.eval("document.getElementById('last').click() || true")
        done_steps = await browser.eval(
            "[...document.querySelectorAll('#checklist li[data-state=done]')]"
            ".map(li => li.dataset.step)"
        )
        assert {"authenticate", "lookup_patient", "take_payment"} <= set(done_steps)
        na = "#checklist li[data-step=review_copay][data-state=not_applicable]"
        assert await count(browser, na) == 1
        allowed = '#log li[data-kind="gate"][data-decision="allow"]'
        assert await count(browser, allowed) == 1
        path = await browser.screenshot(tmp_path / "trace-replay.png")
        print(f"\nstudio screenshot: {path}")


async def test_voice_mode_shows_the_prebuilt_client_beside_the_panels(tmp_path: Path) -> None:
    keys = {"OPENAI_API_KEY": "not-used-until-a-call-connects"}
    async with (
        studio([], keys, tmp_path / "voice.log", page="/studio/") as url,
        Browser(CHROMIUM or "", failures=tmp_path / "voice-failed.png") as browser,
    ):
        await browser.goto(url)
        assert await browser.eval("document.getElementById('mode').textContent") == "voice"
        frame = "document.getElementById('voice')"
        assert await browser.eval(f"!{frame}.hidden && {frame}.getAttribute('src')") == ("/client/")
        assert await count(browser, "#checklist li[data-state=open]") == 9
        client = f"{frame}.contentDocument && {frame}.contentDocument.body"
        await browser.wait_for(f"{client} && {client}.innerText.trim().length > 0")
        path = await browser.screenshot(tmp_path / "voice.png")
        print(f"\nstudio screenshot: {path}")
