"""A voice call's events reach the studio: ``steward rehearse`` publishes each turn on its relay.

The voice bot's pipeline differs from this one only by its transport and speech services, so
the real relay, steward and pipeline are driven in text here and the hub must hold the call.
"""

from __future__ import annotations

from tests.pipecat_support import _quiet_imports  # noqa: F401  (must precede pipecat imports)

# isort: split

from pathlib import Path

from pipecat_steward.cli.rehearse import _publish  # pyright: ignore[reportPrivateUsage]
from pipecat_steward.events.hub import EventHub
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.script import Call, Say
from pipecat_steward.testing.scripted_llm import ScriptedLLM

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


async def test_each_voice_turn_is_published_when_it_is_written_into_the_context() -> None:
    hub = EventHub()
    steward = Steward.from_folder(CLINIC, supervise=False)
    charge = Call("collect_payment", {"patient_id": "pat-1815", "amount": 40})
    llm = ScriptedLLM([charge, Say("I need to verify you first.")])
    steward.attach(llm)
    await _publish(steward, hub, "call-1")
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        await pipeline.say("Just charge me now")
        await pipeline.settle()
        await steward.relay.bus.drain()
    await hub.close("call-1", status="ended")
    events = await hub.store.read("call-1")
    kinds = [e.kind for e in events]
    assert kinds[0] == "call_started" and kinds[-1] == "call_ended"
    said = [e for e in events if e.kind == "caller_transcript"]
    assert [e.text for e in said] == ["Just charge me now"]
    gates = [e for e in events if e.kind == "gate"]
    assert [(g.tool, g.decision) for g in gates] == [("collect_payment", "veto")]
    bot = [e.text for e in events if e.kind == "bot_utterance"]
    assert bot == ["I need to verify you first."]
