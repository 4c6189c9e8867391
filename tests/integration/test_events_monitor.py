"""Monitor events on a real pipeline: each logic_slm call is a ``monitor_check``; corrections
are ``queued`` then ``delivered`` (or ``suppressed`` with the rule that held them back)."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import shutil
from pathlib import Path
from typing import Any

from tests.integration.test_monitor_pipeline import AT_COPAY, CLINIC, adherence, hallucinating, rig

from pipecat_steward.events.schema import CorrectionEvent, Event, MonitorCheck
from pipecat_steward.testing import Say
from pipecat_steward.testing.scripted_slm import ScriptedSLM, verdict

SKIPPED = adherence(lambda _: verdict(violation=("skipped_step", "ask_copay")))


def _events(r: Any) -> list[Event]:
    r.steward.events.sync()
    return list(r.steward.events.publisher.events)


def _corrections(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(e.status, e.step) for e in events if isinstance(e, CorrectionEvent)]


async def test_a_note_is_queued_then_delivered_and_checks_are_metered() -> None:
    async with ScriptedSLM(answer=SKIPPED) as slm, rig(slm, done=AT_COPAY) as r:
        await r.turn("Hi", Say("Your photo is attached."))
        await r.turn("Cool", Say("Anything else today?"))
        r.steward.events.sync()
        await r.turn("What about the copay?", Say("It's $40."))
        events = _events(r)
        rows = len(r.ledger.events)
    shown = [c for c in _corrections(events) if c[0] != "suppressed"]
    assert shown == [("queued", "ask_copay"), ("delivered", "ask_copay")]
    held = {e.reason for e in events if isinstance(e, CorrectionEvent) and e.status == "suppressed"}
    assert "needs the same finding on the next check" in held  # the first finding corroborates
    delivered = [e for e in events if isinstance(e, CorrectionEvent) and e.status == "delivered"]
    assert delivered[0].channel == "silent_note" and delivered[0].text.startswith("[Procedure")
    checks = [e for e in events if isinstance(e, MonitorCheck)]
    assert len(checks) == rows >= 1  # one event per metered logic_slm call
    assert len({c.request_id for c in checks}) == len(checks)
    assert all(c.latency_ms is not None and c.verdict == "ok" for c in checks)
    assert {c.purpose for c in checks} == {"monitor", "extractor"}


async def test_a_severe_correction_is_delivered_at_once() -> None:
    async with (
        ScriptedSLM(answer=hallucinating("take_payment")) as slm,
        rig(slm, done=(*AT_COPAY, "ask_copay")) as r,
    ):
        await r.turn("Can I pay?", Say("Your copay has been charged."))
        await r.turn("Great", Say("You're all set, the payment is done."))
        events = _events(r)
    assert [c for c in _corrections(events) if c[0] != "suppressed"] == [
        ("delivered", "take_payment")
    ]


async def test_a_finding_held_back_is_suppressed_with_its_rule(tmp_path: Path) -> None:
    shutil.copytree(CLINIC, tmp_path / "clinic")
    config = tmp_path / "clinic" / "agent.yaml"
    config.write_text(
        config.read_text().replace("max_corrections_per_step: 1", "max_corrections_per_step: 0")
    )
    async with (
        ScriptedSLM(answer=SKIPPED) as slm,
        rig(slm, done=AT_COPAY, agent=tmp_path / "clinic") as r,
    ):
        await r.turn("Hi", Say("Your photo is attached."))
        await r.turn("Cool", Say("Anything else today?"))
        events = _events(r)
    held = [e for e in events if isinstance(e, CorrectionEvent)]
    assert held and {e.status for e in held} == {"suppressed"}
    assert "observe only" in {e.reason for e in held}


async def test_a_shared_client_tells_each_call_only_its_own_checks() -> None:
    """Two calls on one logic_slm client: each call's events hold its own checks only."""
    from pipecat_steward.agent.loader import load_agent
    from pipecat_steward.core.procedures import done_name
    from pipecat_steward.pipecat.monitor import attach_monitor
    from pipecat_steward.pipecat.steward import Steward
    from pipecat_steward.slm import SLMClient
    from pipecat_steward.slm.config import SessionIdentity
    from pipecat_steward.storage.ledger import MemoryLedger
    from pipecat_steward.testing import FunctionStep, ScriptedLLM, TextPipeline

    ledger = MemoryLedger()
    async with ScriptedSLM(answer=SKIPPED) as slm, SLMClient(ledger=ledger) as client:
        calls: list[tuple[Steward, Any]] = []
        for name in ("call-a", "call-b"):
            steward = Steward(load_agent(CLINIC), supervise=False)
            steward.session.host_write({done_name(s): True for s in AT_COPAY})
            llm = ScriptedLLM([FunctionStep(lambda _: Say("Anything else?")) for _ in range(10)])
            steward.attach(llm)
            stage = slm.stage().model_copy(update={"identity": SessionIdentity(session_id=name)})
            calls.append((steward, attach_monitor(steward, llm, client, stage)))
            async with TextPipeline(llm, observers=steward.observers) as pipeline:
                for words in ("Hi", "Cool", "Great") if name == "call-a" else ("Hi", "Cool"):
                    await pipeline.say(words)
                    await pipeline.settle()
                    await steward.relay.bus.drain()
                    await calls[-1][1].drain()
                    steward.events.sync()
        for _, monitor in calls:
            await monitor.aclose()
    counts = [
        sum(isinstance(e, MonitorCheck) for e in steward.events.publisher.events)
        for steward, _ in calls
    ]
    rows = {s: sum(r.session_id == s for r in ledger.events) for s in ("call-a", "call-b")}
    assert counts == [rows["call-a"], rows["call-b"]] and rows["call-b"] >= 1
    assert rows["call-a"] != rows["call-b"]  # the calls differ, so a mix-up would show
