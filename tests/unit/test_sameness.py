"""A value that Python calls equal but that is another value is a change, wherever it is checked.

``True == 1`` and ``False == 0 == 0.0`` in Python; a condition, a trace, an event and the client
tell them apart. ``same_value`` is checked against JSON's own text (which keeps every type
apart) over generated values, and then each check of "did this value change" on the blackboard
is tried with every such pair: a procedure write, the variable change events, the anticipated
step and the redaction's snapshot of the sensitive values. (The checklist's cache is checked by
the checklist events' property test, with these pairs among its examples.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures.state import Writer
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.state import SessionState, variable_changes
from pipecat_steward.pipecat.redaction import _frozen  # pyright: ignore[reportPrivateUsage]
from pipecat_steward.runtime.engine import open_session

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"

# Equal to Python's ``==``, yet not the same value.
PAIRS: list[tuple[Any, Any]] = [
    (False, 0),
    (True, 1),
    (0, 0.0),
    (1, 1.0),
    (False, 0.0),
    ([0, 1], [False, True]),
    ({"paid": 0}, {"paid": False}),
    ({"items": [{"n": 1}]}, {"items": [{"n": True}]}),
    ((1, 2), (1.0, 2)),
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False).filter(lambda f: not (f == 0 and math.copysign(1, f) < 0)),
    st.sampled_from(["", "a", "0", "true"]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(json_values, json_values)
def test_same_value_is_json_sameness(left: Any, right: Any) -> None:
    as_json = json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
    assert same_value(left, right) == as_json
    assert same_value(left, left)


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=repr)
def test_python_equal_pairs_are_different_values(before: Any, after: Any) -> None:
    assert before == after
    assert not same_value(before, after)
    assert not same_value(after, before)


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=repr)
def test_a_procedure_write_of_an_equal_value_of_another_type_is_a_change(
    before: Any, after: Any
) -> None:
    writer = Writer.over({"x": before})
    writer.set("x", after)
    assert writer.variables["x"] is after
    assert [(c.name, c.old, c.new) for c in writer.changes] == [("x", before, after)]


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=repr)
def test_the_change_events_report_an_equal_value_of_another_type(before: Any, after: Any) -> None:
    old, new = SessionState(), SessionState()
    old.variables["x"], new.variables["x"] = before, after
    changes = variable_changes(old, new)
    assert [(c.name, c.old, c.new) for c in changes] == [("x", before, after)]


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=repr)
def test_an_anticipated_step_is_not_used_after_such_a_write(before: Any, after: Any) -> None:
    session = open_session(load_agent(BELLA))
    session.state.variables["x"] = before
    assert session.anticipation.make(session, "for two please", first_turn=False) is not None
    state = session.state.copy()
    state.variables["x"] = after
    session.state = state
    session.anticipation.take(session, "for two please", first_turn=False)
    assert session.anticipation.stats.hits == 0, "a step made for other variables was used"


@pytest.mark.parametrize(("before", "after"), PAIRS, ids=repr)
def test_the_redaction_snapshot_tells_the_values_apart(before: Any, after: Any) -> None:
    # The redaction of a sensitive value is worked out again when its snapshot changes: the
    # texts of these values, which is what is redacted, differ.
    assert _frozen(before) != _frozen(after)


def test_an_anticipated_step_is_used_when_nothing_changed() -> None:
    session = open_session(load_agent(BELLA))
    session.state.variables["x"] = False
    assert session.anticipation.make(session, "for two please", first_turn=False) is not None
    session.state = session.state.copy()
    session.anticipation.take(session, "for two please", first_turn=False)
    assert session.anticipation.stats.hits == 1


def test_an_object_is_the_same_value_as_itself() -> None:
    """As in Python's own container comparison: a copy of a mapping shares its values."""
    nan = float("nan")
    shared: list[Any] = [nan, {"n": 1}]
    assert same_value(nan, nan)
    assert same_value({"a": shared}, {"a": shared})
    assert same_value([shared], [shared])
    assert not same_value(nan, float("nan"))
