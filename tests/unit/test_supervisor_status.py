"""The supervisor's checklist payload: kept while nothing it reads moves, never stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.procedures import (
    CompiledProcedures,
    ProcedureView,
    ScopeSource,
    Verdict,
    compile_procedures,
    done_name,
    na_name,
    procedure_status,
    status_reads,
)
from pipecat_steward.runtime.supervision import Supervisor

CLINIC: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parents[2] / "bots" / "clinic" / "agent.yaml").read_text()
)
GROUPED = compile_procedures(
    [
        ScopeSource(
            "main",
            "{{#step ask}}Ask whether to pay now.{{/step}}{{#step charge}}Charge with "
            "{{TOOL:pay}}.{{/step}}{{#procedure review}}{{#step approve}}Get a billing "
            "approval.{{/step}}{{/procedure}}",
            {
                "steps": [{"id": "charge", "applies_when": {"kind": "code", "expr": "amount > 0"}}],
                "groups": {"review": {"applies_when": {"kind": "code", "expr": "copay > 100"}}},
            },
        )
    ]
)
PROCEDURES = {
    "clinic": compile_procedures([ScopeSource("main", CLINIC["prompt"], CLINIC["procedure"])]),
    "grouped": GROUPED,
}
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 300), st.sampled_from(["verified", "no", ""])
)


CONDITIONS = ["amount", "copay", "copay_amount", "customer_auth_status"]
"""Every name the conditions above read (and some no condition of one procedure reads)."""


def names_of(procs: CompiledProcedures) -> list[str]:
    """Names a write may touch: flags, what conditions read, and names nothing reads.

    The conditions' names come three times: a write that moves a condition is the rarer case.
    """
    flags = [f(step) for step in sorted(procs.steps) for f in (done_name, na_name)]
    return [*flags, *CONDITIONS * 3, "caller_name", "notes"]


def test_the_payload_reads_each_steps_flags_and_every_condition() -> None:
    reads = set(status_reads(GROUPED))
    for step in ("ask", "charge", "approve"):
        assert {done_name(step), na_name(step)} <= reads
    assert {"amount", "copay"} <= reads
    assert "caller_name" not in reads


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(PROCEDURES)),
    st.lists(st.tuples(st.integers(0, 99), VALUES, st.booleans()), max_size=40),
)
def test_the_kept_payload_is_always_the_one_worked_out_afresh(
    which: str, writes: list[tuple[int, Any, bool]]
) -> None:
    """After any writes (some deleting), a verdict now and then: the payload a fresh run gives.

    It stays the very same object while what it says does not change.
    """
    procs = PROCEDURES[which]
    names = names_of(procs)
    supervisor = Supervisor(procs, {})
    variables: dict[str, Any] = dict(supervisor.start({}))
    last = supervisor.status(variables)
    for index, value, delete in writes:
        name = names[index % len(names)]
        if delete:
            variables.pop(name, None)
        else:
            variables[name] = value
        if index % 7 == 0:  # the procedure state moves too
            step = sorted(procs.steps)[index % len(procs.steps)]
            variables = dict(supervisor.verdict(variables, Verdict(satisfied=(step,))))
        status = supervisor.status(variables)
        fresh = procedure_status(ProcedureView(procs, supervisor.state, variables))
        assert status == fresh
        assert (status is last) == (fresh == last)
        last = status
