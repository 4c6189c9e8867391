"""Hand-overs do something on every path: a transfer part and an escalation call the flow's
hand-over tool and the app's callback; an end_session part asks the host to end the call."""

from __future__ import annotations

from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import Action, ToolCall, compile_flow
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.handover import Handover
from pipecat_steward.runtime.records import RecordedCall
from pipecat_steward.runtime.session import StewardSession

CONFIG: dict[str, Any] = {
    "handover": {"tool": "to_desk", "args": {"queue": "billing", "note": "{summary}"}},
    "slots": [
        {
            "name": "account",
            "setter": "set_account",
            "ask": "Your account number?",
            "validation": {
                "max_retries": 1,
                "on_exhaust": {
                    "say": "Let me put you through to billing.",
                    "response": [{"type": "transfer", "to": "billing"}, {"type": "end_session"}],
                },
            },
        },
        {"name": "topic", "setter": "set_topic", "ask": "What is it about?"},
    ],
}


class _Host:
    """A host as the Pipecat hook is one: it delivers the response parts the session hands it."""

    def __init__(self, session: StewardSession) -> None:
        self.session = session
        self.ended = 0
        self.said: list[str] = []

    async def run_llm(self, action: Action) -> None:
        return None

    async def speak(self, text: str) -> None:
        self.said.append(text)

    async def deliver(self, action: Action) -> None:
        self.session.take_payloads(action)

    def record(self, call: ToolCall, done: RecordedCall) -> None:
        return None

    async def end(self) -> None:
        self.ended += 1


def _session(seen: list[Handover]) -> StewardSession:
    calls: list[dict[str, Any]] = []

    def to_desk(**args: Any) -> dict[str, Any]:
        calls.append(args)
        return {"ok": True}

    def set_account(value: str) -> dict[str, Any]:
        return {"error": True, "error_code": "invalid"}

    agent = Agent(
        name="desk",
        prompt="",
        flow=compile_flow(CONFIG),
        tools={"to_desk": to_desk, "set_account": set_account},
        raw={},
    )
    session = StewardSession(agent, on_handover=seen.append)
    session.desk_calls = calls  # type: ignore[attr-defined]
    return session


async def test_a_transfer_part_hands_over_and_an_end_session_part_ends_once() -> None:
    seen: list[Handover] = []
    session = _session(seen)
    driver, host = Driver(session), _Host(session)
    await driver.inference(host, "hi", first_turn=True, speculative=False)
    session.tool_call("set_account", {"value": "x"})
    await driver.inference(host, "", first_turn=False, speculative=False)
    assert host.said == ["Let me put you through to billing."]
    kinds = [h.kind for h in seen]
    assert sorted(kinds) == ["escalation", "transfer"]
    transfer = next(h for h in seen if h.kind == "transfer")
    assert transfer.details["to"] == "billing"
    desk = session.desk_calls  # type: ignore[attr-defined]
    assert len(desk) == 2 and desk[0]["queue"] == "billing"
    assert host.ended == 1 and session.ended
    await driver.inference(host, "hello?", first_turn=False, speculative=False)
    assert host.ended == 1, "the call is ended once"


async def test_a_failing_callback_is_contained_and_traced() -> None:
    def boom(_: Handover) -> None:
        raise RuntimeError("queue down")

    seen: list[Handover] = []
    s = _session(seen)
    s.on_handover = boom
    driver, host = Driver(s), _Host(s)
    await driver.inference(host, "hi", first_turn=True, speculative=False)
    s.tool_call("set_account", {"value": "x"})
    await driver.inference(host, "", first_turn=False, speculative=False)
    events = [e for e in s.turn.events if e.tag == "handover"]
    assert events and all(str(e.data["callback"]).startswith("error") for e in events)
