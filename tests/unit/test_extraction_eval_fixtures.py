"""The extraction eval fixtures are well formed (the eval itself is scripts/slm_eval)."""

from __future__ import annotations

import json
from pathlib import Path

from pipecat_steward.core.extraction import build_schema, eligible
from pipecat_steward.core.variables import VariableSpec, coerce

CASES = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "extraction_eval_cases.json").read_text()
)["cases"]


def test_every_case_is_eligible_typed_and_answerable() -> None:
    assert len(CASES) >= 10 and len({c["id"] for c in CASES}) == len(CASES)
    for case in CASES:
        specs = [VariableSpec.model_validate(v) for v in case["variables"]]
        assert eligible(specs) == tuple(specs), case["id"]
        assert set(case["expected"]) == set(build_schema(specs)["properties"]), case["id"]
        for spec in specs:
            coerce(spec, case["expected"][spec.name])  # raises when a value cannot be the type
        assert case["utterances"], case["id"]
