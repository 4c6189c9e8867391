"""A task may re-run when the caller adds a value to one of its inputs after it ran."""

from __future__ import annotations

from typing import Any

import pytest

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.conversation import Conversation, Inference, RecordedCall


def _flow(rerun: bool, terminal: bool = False) -> dict[str, Any]:
    slot = {"source": "user", "setter": "set_search", "required": False}
    return {
        "slots": [
            {**slot, "name": "city", "setter_field": "city", "required": True},
            {**slot, "name": "airline", "setter_field": "airline"},
            {"name": "results", "source": "task:Search"},
            {
                **slot,
                "name": "pick",
                "setter": "set_pick",
                "requires": ["results"],
                "required": True,
            },
            {**slot, "name": "seat", "setter": "set_seat", "requires": ["pick"], "required": True},
        ],
        "tasks": [
            {
                "name": "Search",
                "tool": "search",
                "inputs": ["city", "airline"],
                "requires": ["city"],
                "outputs": {"results": "results"},
                "rerun_on_new_input": rerun,
                "terminal": terminal,
            },
        ],
    }


def _search(**args: Any) -> dict[str, Any]:
    return {"success": True, "results": f"flights {sorted(args.items())}"}


def _ran(rerun: bool) -> Conversation:
    conv = Conversation(compile_flow(_flow(rerun)), {"search": _search})
    conv.turn("Paris", [Inference(calls=[RecordedCall("set_search", {"city": "Paris"})])])
    conv.turn("the first", [Inference(calls=[RecordedCall("set_pick", {"value": "first"})])])
    assert conv.state.succeeded == ["Search"] and conv.state.record("pick").value == "first"
    return conv


def _add_airline(conv: Conversation) -> None:
    record = conv.turn("United", [Inference(calls=[RecordedCall("set_search", {"airline": "United"})])])
    assert [c.outcome for c in record.llm_calls] == ["ok"]


def test_a_new_input_value_reruns_a_task_that_asks_for_it() -> None:
    conv = _ran(rerun=True)
    _add_airline(conv)
    # It ran again with the new constraint in the same turn, and what was chosen from the
    # old result is cleared like after a correction.
    assert conv.state.succeeded == ["Search"]
    assert "United" in str(conv.state.record("results").value)
    assert conv.state.record("pick").status == "empty"


def test_by_default_only_a_correction_reruns_a_task() -> None:
    conv = _ran(rerun=False)
    _add_airline(conv)
    assert "United" not in str(conv.state.record("results").value)
    assert conv.state.record("pick").value == "first"


def test_a_terminal_task_cannot_rerun() -> None:
    with pytest.raises(ConfigError, match=r"tasks\[0\]\.rerun_on_new_input"):
        compile_flow(_flow(rerun=True, terminal=True))
