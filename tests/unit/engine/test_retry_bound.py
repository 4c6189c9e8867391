"""The retry bound of a task holds however the caller changes its inputs in between.

A correction re-fires the task with the new value; it must not wipe the count of failures
since the task last succeeded, or a caller who keeps changing an input keeps the backend
failing forever and never reaches the exhaust path.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow, route_executor, step
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.dispatch import dispatch


def _flow(max_retries: int, readback: bool, clear: bool) -> Any:
    return compile_flow(
        {
            "slots": [
                {"name": "a", "setter": "set_a", "ask": "A?", "requires_readback": readback},
                {"name": "b", "setter": "set_b", "ask": "B?"},
                {"name": "out", "source": "task:T"},
                {"name": "after", "setter": "set_after", "requires": ["out"], "ask": "After?"},
            ],
            "tasks": [
                {
                    "name": "T",
                    "tool": "t",
                    "inputs": ["a", "b"],
                    "outputs": {"r": "out"},
                    "on_failure": {
                        "max_retries": max_retries,
                        "retry_say": "That failed.",
                        "clear_slots": ["b"] if clear else [],
                        "on_exhaust": {"say": "Let me get a colleague."},
                    },
                }
            ],
            # Steer-back stays out of the way: the bound under test is the task's.
            "steer_back": {"soft_after": 50, "hard_after": 60, "escalate_after": 70},
        }
    )


class _Run:
    def __init__(self, flow: Any) -> None:
        self.flow, self.state, self.fails = flow, SessionState(), 0

    def tool(self, name: str, args: dict[str, Any]) -> None:
        self.state = dispatch(self.flow, self.state, {}, name, args, check_visible=False).state

    def turn(self, text: str) -> None:
        for _ in range(20):
            result = step(self.flow, self.state, text)
            self.state, text = result.state, ""
            calls = [c for c in result.action.calls if c.kind != "then"]
            if not calls:
                return
            for call in calls:
                if call.kind == "confirm":
                    self.tool("confirm_pending", {})
                else:
                    self.fails += 1
                    self.state = route_executor(
                        self.flow, self.state, call.name, {"success": False}
                    ).state


edits = st.lists(
    st.tuples(
        st.sampled_from(["correct_a", "correct_b", "set_b", "yes", "hmm"]), st.integers(0, 99)
    ),
    min_size=1,
    max_size=30,
)


@given(st.integers(1, 4), st.booleans(), st.booleans(), edits)
@settings(max_examples=300, deadline=None)
def test_a_failing_task_escalates_at_its_bound_whatever_the_corrections(
    max_retries: int, readback: bool, clear: bool, seq: list[tuple[str, int]]
) -> None:
    run = _Run(_flow(max_retries, readback, clear))
    run.turn("hi")
    run.tool("set_a", {"v": "a0"})
    run.tool("set_b", {"v": "b0"})
    run.turn("yes")
    for kind, n in seq:
        if run.state.status != "in_progress":
            break
        if kind.startswith("correct_"):
            run.tool("correct_slot", {"slot": kind[-1], "value": f"{kind[-1]}{n}"})
            run.turn("")
        elif kind == "set_b":
            run.tool("set_b", {"v": f"b{n}"})
            run.turn("")
        else:
            run.turn(kind)
        assert run.fails <= max_retries, "a task fails at most max_retries times in a row"
        if run.fails == max_retries:
            assert run.state.status == "escalated", "the bound reached takes the exhaust path"


def test_correcting_an_input_after_a_failure_keeps_the_count() -> None:
    run = _Run(_flow(2, False, False))
    run.turn("hi")
    run.tool("set_a", {"v": "a0"})
    run.tool("set_b", {"v": "b0"})
    run.turn("yes")
    assert run.fails == 1 and run.state.status == "in_progress"
    run.tool("correct_slot", {"slot": "a", "value": "a1"})
    run.turn("")
    assert run.fails == 2
    assert run.state.status == "escalated"
