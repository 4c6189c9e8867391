"""A gate slot cannot loop: the config that would loop is refused, and an open gate reaches
escalation through its errors, a decline or a stall."""

from __future__ import annotations

from typing import Any

import pytest

from pipecat_steward.core.slots import compile_flow, step
from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.dispatch import dispatch


def _config(**gate: Any) -> dict[str, Any]:
    return {
        "gate_slot": "member",
        "slots": [
            {"name": "member", "setter": "set_member", "ask": "Are you a member?", **gate},
            {"name": "plan", "setter": "set_plan", "ask": "Which plan?"},
        ],
        "steer_back": {
            "soft_after": 2,
            "hard_after": 3,
            "escalate_after": 4,
            "on_exhaust": {"say": "Let me get a colleague."},
        },
    }


@pytest.mark.parametrize(
    "gate",
    [{"requires_readback": True}, {"source": "event"}, {"requires": ["plan"]},
     {"condition": "plan == 'x'"}],
)
def test_a_gate_slot_that_could_never_settle_is_refused(gate: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="gate_slot: gate slot 'member'"):
        compile_flow(_config(**gate))


def test_a_gate_the_caller_never_answers_escalates() -> None:
    flow = compile_flow(_config())
    state, statuses = SessionState(), []
    for _ in range(8):
        result = step(flow, state, "what?")
        state = result.state
        statuses.append(state.status)
        if state.status != "in_progress":
            assert result.action.message == "Let me get a colleague."
            break
    assert statuses[-1] == "escalated"
    assert len(statuses) <= 5


def test_gate_errors_count_and_exhaust() -> None:
    flow = compile_flow(_config(validation={"max_retries": 2, "on_exhaust": {"say": "Sorry."}}))
    tools = {"set_member": lambda v: {"error": True, "error_code": "bad"}}
    state = step(flow, SessionState(), "hi").state
    for _ in range(2):
        state = dispatch(flow, state, tools, "set_member", {"v": "?"}).state
        result = step(flow, state, "")
        state = result.state
    assert state.status == "escalated"
    assert result.action.message == "Sorry."


def test_a_declined_gate_escalates_instead_of_asking_forever() -> None:
    flow = compile_flow(_config())
    state = step(flow, SessionState(), "hi").state
    state = dispatch(flow, state, {}, "decline_slot", {"slot": "member"}).state
    result = step(flow, state, "")
    assert result.state.status == "escalated"


def test_an_answered_gate_opens_the_flow() -> None:
    flow = compile_flow(_config())
    state = step(flow, SessionState(), "hi").state
    state = dispatch(flow, state, {}, "set_member", {"v": "yes"}).state
    result = step(flow, state, "")
    assert result.action.asks == ("plan",)
