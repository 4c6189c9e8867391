"""The recorder's checklist events follow the checklist through every kind of change.

The supervisor works the checklist out again only when its inputs (the procedure state and
the variables) changed, and the recorder reads nothing new from an unchanged payload; a
property test checks, against the checklist worked out afresh, that no change is missed:
writes in place or by a new state, verdicts, findings that move the procedure state alone,
and syncs with nothing changed. The client's ``procedure_status`` messages follow it too: a
take gives the current checklist once, however many changes led to it, and nothing when the
client already has it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.core.procedures import (
    ProcedureViolation,
    Verdict,
    done_name,
    procedure_status,
)
from pipecat_steward.core.sameness import same_value
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.recorder import record_session
from pipecat_steward.events.schema import ChecklistStatus
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.session import StewardSession

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


@pytest.fixture(scope="module")
def agent() -> Agent:
    return load_agent(CLINIC)


def _steps(agent: Agent) -> list[str]:
    procs = agent.procedures
    assert procs is not None
    return sorted(procs.steps)


def _names(agent: Agent) -> list[str]:
    return [v.name for v in agent.variables] + [done_name(s) for s in _steps(agent)]


VALUES = st.sampled_from([None, True, False, "verified", "unverified", 40, 0, "Ada"])


def _operations(agent: Agent) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    write = st.tuples(
        st.sampled_from(["in_place", "new_state"]), st.sampled_from(_names(agent)), VALUES
    )
    verdict = st.tuples(st.sampled_from(["verdict", "violation"]), st.sampled_from(_steps(agent)))
    nothing = st.tuples(st.just("nothing"))
    return st.lists(st.one_of(write, verdict, nothing), min_size=1, max_size=12)


def _apply(session: StewardSession, op: tuple[Any, ...]) -> None:
    supervisor = session.supervisor
    assert supervisor is not None
    if op[0] == "in_place":
        session.state.variables[op[1]] = op[2]
    elif op[0] == "new_state":
        state = session.state.copy()
        state.variables[op[1]] = op[2]
        session.state = state
    elif op[0] in ("verdict", "violation"):
        finding = Verdict(satisfied=(op[1],))
        if op[0] == "violation":  # moves the procedure state alone: the variables stay
            finding = Verdict(violation=ProcedureViolation("skipped_step", op[1], op[1]))
        variables = supervisor.verdict(session.state.variables, finding)
        state = session.state.copy()
        state.variables = dict(variables)
        session.state = state


def _shown(publisher: EventPublisher) -> dict[str, Any]:
    last: dict[str, Any] = {}
    for event in publisher.events:
        if isinstance(event, ChecklistStatus):
            last[event.procedure] = ([(s.id, s.state) for s in event.steps], event.last_violation)
    return last


def _truth(session: StewardSession) -> dict[str, Any]:
    """The checklist worked out afresh from the session's procedure state and variables."""
    supervisor = session.supervisor
    assert supervisor is not None
    return procedure_status(supervisor.view(session.state.variables))


def _current(session: StewardSession) -> dict[str, Any]:
    status = _truth(session)
    procedures: list[dict[str, Any]] = status["procedures"]  # type: ignore[assignment]
    return {
        p["key"]: ([(s["id"], s["state"]) for s in p["steps"]], p.get("last_violation"))
        for p in procedures
    }


def test_the_events_show_the_checklist_after_any_changes(agent: Agent) -> None:
    @settings(max_examples=300, deadline=None)
    @given(_operations(agent))
    # Equal to Python, not the same value: a write of 0 over False changes the checklist.
    @example([("in_place", "copay_amount", False), ("in_place", "copay_amount", 0)])
    @example([("new_state", "copay_amount", 0), ("new_state", "copay_amount", False)])
    def run(operations: list[tuple[Any, ...]]) -> None:
        session = open_session(agent)
        publisher = EventPublisher("s")
        recorder = record_session(session, publisher)
        recorder.sync()
        for op in operations:
            _apply(session, op)
            recorder.sync()
            assert _shown(publisher) == _current(session)

    run()


def test_a_checklist_worked_out_again_to_the_same_value_is_the_same_payload(agent: Agent) -> None:
    """Its readers (the recorder, the client's take) tell "nothing new" by identity."""

    @settings(max_examples=200, deadline=None)
    @given(_operations(agent))
    def run(operations: list[tuple[Any, ...]]) -> None:
        session = open_session(agent)
        supervisor = session.supervisor
        assert supervisor is not None
        before = supervisor.status(session.state.variables)
        for op in operations:
            _apply(session, op)
            after = supervisor.status(session.state.variables)
            assert (after is before) == same_value(_truth(session), before)
            before = after

    run()


def _supervised(session: StewardSession, op: tuple[Any, ...]) -> None:
    """Apply ``op`` the way the session does: every write is fed to the supervisor."""
    supervisor = session.supervisor
    assert supervisor is not None
    variables = dict(session.state.variables)
    if op[0] in ("in_place", "new_state"):
        variables[op[1]] = op[2]
        variables = supervisor.sync(variables, [op[1]])
    elif op[0] == "verdict":
        variables = supervisor.verdict(variables, Verdict(satisfied=(op[1],)))
    elif op[0] == "violation":
        finding = ProcedureViolation("skipped_step", op[1], op[1])
        variables = supervisor.verdict(variables, Verdict(violation=finding))
    state = session.state.copy()
    state.variables = variables
    session.state = state


def _flat(parts: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [op for part in parts for op in part]


def test_a_take_gives_the_client_the_current_checklist_once(agent: Agent) -> None:
    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.one_of(_operations(agent), st.just([("take",)]))).map(_flat))
    def run(operations: list[tuple[Any, ...]]) -> None:
        session = open_session(agent)
        delivered: dict[str, Any] | None = None
        for op in [*operations, ("take",)]:
            if op[0] != "take":
                _supervised(session, op)
                continue
            taken = session.take_status(events=False)
            current = _truth(session)
            assert taken == ([] if current == delivered else [current])
            delivered = current

    run()


def test_a_changed_copy_of_the_checklist_changes_nothing_the_steward_sends(agent: Agent) -> None:
    """The payload is worked out once and shared inside; ``checklist()`` hands out a copy."""
    session = open_session(agent)
    publisher = EventPublisher("s")
    record_session(session, publisher).sync()
    truth = _truth(session)
    changed = session.checklist()
    assert changed is not None
    changed["current_step"] = "elsewhere"
    changed["procedures"][0]["steps"][0]["state"] = "done"  # type: ignore[index]
    assert session.checklist() == truth
    assert session.take_status(events=False) == [truth]
    assert _shown(publisher) == _current(session)
