"""A decline is terminal: no correction, invalidation or later step turns it back into a question."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.engine.test_properties import Event, events, flows

from pipecat_steward.core.slots import compile_flow, step
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.dispatch import dispatch


def _chain_flow() -> Any:
    return compile_flow(
        {
            "slots": [
                {"name": "city", "setter": "set_city", "ask": "Which city?"},
                {
                    "name": "area",
                    "setter": "set_area",
                    "ask": "Which area?",
                    "requires": ["city"],
                    "required": False,
                },
                {
                    "name": "street",
                    "setter": "set_street",
                    "ask": "Street?",
                    "requires": ["area"],
                    "required": False,
                },
                {"name": "name", "setter": "set_name", "ask": "Name?"},
            ]
        }
    )


def test_correcting_what_a_declined_slot_requires_keeps_the_decline() -> None:
    flow = _chain_flow()
    state = step(flow, SessionState(), "hi").state
    state = dispatch(flow, state, {}, "set_city", {"v": "Rome"}).state
    state = step(flow, state, "").state
    state = dispatch(flow, state, {}, "decline_slot", {"slot": "area"}, user_text="rather not").state
    state = step(flow, state, "").state
    args = {"slot": "city", "value": "Milan"}
    routed = dispatch(flow, state, {}, "correct_slot", args, user_text="Milan, actually")
    assert routed.ok
    assert "area" not in routed.reply["invalidated"]  # pyright: ignore[reportOperatorIssue]
    result = step(flow, routed.state, "")
    assert result.state.record("area").status == "declined"
    assert "area" not in result.action.asks
    assert result.action.asks == ("name",)


# Declines and corrections weighted up, so chains through a declined slot come up often.
decline_heavy = st.lists(
    st.one_of(
        st.tuples(st.just("decline"), st.integers(0, 6)),
        st.tuples(st.just("correct"), st.tuples(st.integers(0, 2), st.sampled_from(["c", "d"]))),
        st.tuples(st.just("set"), st.tuples(st.integers(0, 6), st.sampled_from(["a", "b"]))),
        st.tuples(st.just("say"), st.sampled_from(["yes", "hmm"])),
    ),
    max_size=25,
)


@given(flows(), st.one_of(events, decline_heavy))
@settings(max_examples=300, deadline=None)
def test_no_correction_undoes_a_decline(config: dict[str, Any], seq: list[Event]) -> None:
    flow = compile_flow(config)
    state = step(flow, SessionState(), "hi").state
    for kind, arg in seq:
        declined = {n for n, r in state.slots.items() if r.status == "declined"}
        if kind == "correct":
            args = {"slot": f"s{arg[0]}", "value": arg[1]}
            said = f"actually {arg[1]}"
            state = dispatch(
                flow, state, {}, "correct_slot", args, check_visible=False, user_text=said
            ).state
        elif kind == "decline":
            args = {"slot": f"s{arg}"}
            state = dispatch(flow, state, {}, "decline_slot", args, check_visible=False).state
        elif kind == "set" and f"set_s{arg[0]}" in flow.setters:
            state = dispatch(flow, state, {}, f"set_s{arg[0]}", {"v": arg[1]}).state
        state = step(flow, state, arg if kind == "say" else "").state
        for name in declined:
            assert state.record(name).status == "declined", f"{name} un-declined by {kind}"
