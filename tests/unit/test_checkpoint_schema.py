"""Every field the runtime saves is one a restore accepts (the schema keeps up with the state)."""

from __future__ import annotations

import json
from dataclasses import fields, replace

from pipecat_steward.core.procedures.state import ProcedureState, ProcedureViolation
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.checkpoint_schema import FORMAT_VERSION, payload_problem


def _payload(procedures: ProcedureState) -> dict[str, object]:
    return {
        "format_version": FORMAT_VERSION,
        "state": SessionState().to_json(),
        "turns_done": 3,
        "script": "",
        "procedures": procedures.to_dict(),
    }


def test_a_procedure_state_with_every_field_set_restores() -> None:
    full = replace(
        ProcedureState(),
        scopes=("main",),
        violations=(("main", ProcedureViolation("skipped_step", "pay", "done early")),),
        visit=2,
        receipts=(("collect_payment", "receipt=r-1, amount=500"),),
    )
    assert {f.name for f in fields(ProcedureState)} <= set(full.to_dict())
    payload = json.loads(json.dumps(_payload(full)))
    assert payload_problem(payload) is None


def test_an_older_checkpoint_without_receipts_still_restores() -> None:
    payload = json.loads(json.dumps(_payload(ProcedureState())))
    del payload["procedures"]["receipts"]
    assert payload_problem(payload) is None
