"""Hand-overs do something on every path: a transfer part and an escalation call the flow's
hand-over tool and the app's callback; an end_session part asks the host to end the call."""

from __future__ import annotations

from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots import compile_flow
from pipecat_steward.runtime.driver import Driver
from pipecat_steward.runtime.handover import Handover
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
    """A thin host as the Pipecat hook is one: it carries out what the driver returns."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.ended = 0
        self.said: list[str] = []

    async def turn(self, user_text: str, *, first_turn: bool = False) -> None:
        outcome = await self.driver.inference(user_text, first_turn=first_turn)
        if outcome.say:
            self.said.append(outcome.say)
        done = await self.driver.complete(outcome)
        self.ended += done.end


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
    host = _Host(Driver(session))
    await host.turn("hi", first_turn=True)
    session.tool_call("set_account", {"value": "x"})
    await host.turn("")
    assert host.said == ["Let me put you through to billing."]
    kinds = [h.kind for h in seen]
    assert sorted(kinds) == ["escalation", "transfer"]
    transfer = next(h for h in seen if h.kind == "transfer")
    assert transfer.details["to"] == "billing"
    desk = session.desk_calls  # type: ignore[attr-defined]
    assert len(desk) == 2 and desk[0]["queue"] == "billing"
    assert host.ended == 1 and session.ended
    await host.turn("hello?")
    assert host.ended == 1, "the call is ended once"


async def test_a_failing_callback_is_contained_and_traced() -> None:
    def boom(_: Handover) -> None:
        raise RuntimeError("queue down")

    seen: list[Handover] = []
    s = _session(seen)
    s.on_handover = boom
    host = _Host(Driver(s))
    await host.turn("hi", first_turn=True)
    s.tool_call("set_account", {"value": "x"})
    await host.turn("")
    events = [e for e in s.turn.events if e.tag == "handover"]
    assert events and all(str(e.data["callback"]).startswith("error") for e in events)
