"""Canaries: a sensitive value never reaches the event store, a subscriber or an RTVI message.

The clinic bot with sensitive variables (see ``test_canaries``) takes a call whose caller says
secrets the host knows, secrets it learns only later and a secure capture, while tools echo
them, the model repeats them and the monitor and extractor run. The call's events go to a
SQLite event store through a hub; a live subscriber (what the studio's WebSocket sends) and
the pipeline's RTVI server messages are captured. Every byte of each is scanned.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split
import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from tests.integration.test_canaries import (
    CANARIES,
    CARD,
    PASSWORD,
    SSN,
    UNKNOWN,
    UNKNOWN_CARD,
    UNKNOWN_SSN,
    clinic_with_secrets,
    hits,
)
from tests.integration.test_stale_worker import ServerMessages

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import done_name
from pipecat_steward.events import EventHub
from pipecat_steward.events.live import RTVI_TYPE, RTVI_VERSION
from pipecat_steward.events.sqlite_store import SQLiteEventStore
from pipecat_steward.pipecat.extractor import attach_extractor
from pipecat_steward.pipecat.monitor import attach_monitor
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger
from pipecat_steward.testing import Call, FunctionStep, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.scripted_slm import (
    Answer,
    ScriptedSLM,
    SLMRequest,
    VerdictOracle,
    null_object,
)

SETTER = '''

def set_member_ref(ref: str) -> dict[str, Any]:
    """Record the member reference the caller gives (here: their SSN, a careless design)."""
    return {"stored": True, "value": str(ref).strip()}
'''


def clinic_with_a_secret_slot(folder: Path) -> Path:
    """The clinic with sensitive variables and a slot the model fills with the SSN."""
    clinic_with_secrets(folder)
    config: dict[str, Any] = yaml.safe_load((folder / "agent.yaml").read_text())
    config["flow"]["slots"].append(
        {
            "name": "member_ref",
            "setter": "set_member_ref",
            "hint": "The member reference",
            "ask": "What is your member reference?",
        }
    )
    (folder / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (folder / "tools.py").write_text((folder / "tools.py").read_text() + SETTER)
    return folder


async def test_no_canary_reaches_the_store_a_subscriber_or_rtvi(tmp_path: Path) -> None:
    agent = load_agent(clinic_with_a_secret_slot(tmp_path / "clinic"))
    store = SQLiteEventStore(tmp_path / "events.db")
    hub = EventHub(store)
    steward = Steward(agent, supervise=False, events=await hub.open("call-1"))
    live: list[str] = []

    async def follow() -> None:
        async for event in hub.subscribe("call-1"):
            live.append(event.model_dump_json())

    follower = asyncio.create_task(follow())
    oracle = VerdictOracle()

    def answer(request: SLMRequest) -> Answer:
        return null_object(request) if request.kind == "extraction" else oracle(request)

    queue: list[Any] = []
    pre = ("authenticate", "confirm_identity", "lookup_patient", "confirm_appointment", "headshot")
    steward.session.host_write({done_name(s): True for s in pre} | {"copay_amount": 40})
    llm = ScriptedLLM([FunctionStep(lambda _: queue.pop(0) if queue else ()) for _ in range(40)])
    steward.attach(llm)
    messages = ServerMessages()
    async with ScriptedSLM(answer=answer) as slm, SLMClient(ledger=MemoryLedger()) as client:
        monitor = attach_monitor(steward, llm, client, slm.stage())
        extractor = attach_extractor(steward, client, slm.stage())
        async with TextPipeline(
            llm, observers=[*steward.observers, messages], rtvi=True
        ) as pipeline:

            async def turn(user: str, *steps: Any) -> None:
                queue[:] = list(steps)
                await pipeline.say(user)
                await pipeline.settle()
                await steward.relay.bus.drain()
                await monitor.drain()
                await extractor.drain()
                steward.events.end_turn()
                await asyncio.sleep(0.05)  # the RTVI sender runs in its own task
                await pipeline.settle()

            session = steward.session
            await turn(f"Hi it's Ada, the number on my file is {UNKNOWN_SSN}", Say("Thanks Ada."))
            await turn(f"Just charge {UNKNOWN_CARD} for the copay", Say("I can take it now."))
            session.host_write({"member_ssn": SSN})
            await turn(
                f"my social is {SSN.replace('-', ' ')}",
                Call("verify_member", {"ssn": SSN}),
                Call("set_member_ref", {"ref": SSN}),
                Say(f"Record {SSN} verified."),
            )
            session.host_write({"secure_capture_active": True})
            await turn(CARD, Say("Got it."))
            session.host_write({"secure_capture_active": False})
            await turn(
                "keep that card on file",
                Call("store_card", {"card_number": CARD}),
                Say(f"Your card {CARD} is stored."),
            )
            await turn(
                f"set my portal password to {PASSWORD}",
                Call("reset_portal", {"password": PASSWORD}),
                Say(f"Password {PASSWORD} set."),
            )
            session.host_write({"portal_password": PASSWORD})
            oracle.truth.add("ask_copay")
            await turn(
                "Yes, charge the $40 copay now",
                Call("collect_payment", {"patient_id": "pat-1815", "amount": 40}),
                Say(f"Charged. Member {SSN}, password {PASSWORD}."),
            )
        await monitor.aclose()
        await steward.events.aclose("done")
    await hub.close("call-1")
    await asyncio.wait_for(follower, 2)
    stored = [e.model_dump_json() for e in await store.read("call-1")]
    raw = [b"".join(p.read_bytes() for p in tmp_path.glob("events.db*")).decode("latin-1")]
    await store.close()
    rtvi = [json.dumps(m) for m in messages.data if m.get("type") == RTVI_TYPE]
    kinds = {json.loads(t)["kind"] for t in stored}
    assert {"caller_transcript", "tool_result", "bot_utterance", "monitor_check", "gate"} <= kinds
    assert len(stored) == len(live)
    # The client gets the events in order with the steward's own messages, so those recorded
    # after the call's last inference (its last words, call_ended) reach only the store.
    batches = [json.loads(m) for m in rtvi]
    assert all(b["version"] == RTVI_VERSION and b["events"] for b in batches)
    sent = [e["seq"] for b in batches for e in b["events"]]
    assert len(batches) < len(sent)  # the events of one flush travel together
    assert sent == [json.loads(t)["seq"] for t in stored][: len(sent)]
    assert len(sent) >= len(stored) // 2
    for channel in (stored, raw, live, rtvi):
        assert hits(channel) == dict.fromkeys(CANARIES, 0)
        assert hits(channel, UNKNOWN) == dict.fromkeys(UNKNOWN, 0)
    assert any("[secure capture: redacted]" in t for t in stored)
    slot = [json.loads(t) for t in stored if '"member_ref"' in t and '"slot_change"' in t]
    assert slot and slot[-1]["status"] != "empty"  # the slot was filled, and shows redacted
