"""A voice call's events reach the studio's store, variables included.

``steward rehearse`` opens the call's publisher on the studio's hub, gives it to the steward and
watches the agent's variables. The voice pipeline differs from the text one only by its
transport and speech services, so the real relay, steward and pipeline run in text here.
"""

from __future__ import annotations

from tests.pipecat_support import _quiet_imports  # noqa: F401  (must precede pipecat imports)

# isort: split

from pathlib import Path

from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

from pipecat_steward.cli.rehearse import build_rehearsal
from pipecat_steward.events.hub import EventHub
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.studio.live import VariableWatch
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.script import Call, Say
from pipecat_steward.testing.scripted_llm import ScriptedLLM

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


async def test_the_rehearsal_steward_publishes_on_the_studio_hub() -> None:
    hub = EventHub()
    publisher = await hub.open("call-1")
    transport = SmallWebRTCTransport(SmallWebRTCConnection(), TransportParams())
    env = {"OPENAI_API_KEY": "sk-dummy", "STEWARD_MONITOR_ENABLED": "0"}
    built = build_rehearsal(CLINIC, transport, env, publisher)
    assert built.steward.events.publisher is publisher
    assert [e.kind for e in publisher.events] == ["call_started"]
    await hub.close("call-1")


async def test_a_call_and_its_variables_reach_the_store() -> None:
    hub = EventHub()
    publisher = await hub.open("call-2")
    steward = Steward.from_folder(CLINIC, supervise=False, events=publisher)
    charge = Call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    llm = ScriptedLLM([charge, Say("I need to verify you first.")])
    steward.attach(llm)
    watch = VariableWatch(steward, publisher).attach()
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        await pipeline.say("Just charge me now")
        await pipeline.settle()
        steward.session.host_write({"customer_auth_status": "verified"})  # the platform
        watch.sync()
        await steward.relay.bus.drain()
    await steward.events.aclose("ended")
    await hub.close("call-2")
    events = await hub.store.read("call-2")
    assert events[0].kind == "call_started" and events[-1].kind == "call_ended"
    gates = [(e.tool, e.decision) for e in events if e.kind == "gate"]
    assert gates == [("collect_payment", "veto")]
    slots = {e.slot: (e.value, e.source) for e in events if e.kind == "slot_change"}
    assert slots["customer_auth_status"] == ("verified", "platform")
