"""The procedure eval fixtures are well formed (the eval itself is scripts/slm_eval)."""

from __future__ import annotations

import json
from pathlib import Path

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.monitor import MAX_REQUIREMENTS, VIOLATION_KINDS

ROOT = Path(__file__).resolve().parents[2]
CASES = json.loads((ROOT / "tests" / "fixtures" / "procedure_eval_cases.json").read_text())["cases"]


def test_every_case_names_real_steps_and_a_known_violation() -> None:
    assert len(CASES) >= 10 and len({c["id"] for c in CASES}) == len(CASES)
    for case in CASES:
        procs = load_agent(ROOT / case["agent"]).procedures
        assert procs is not None
        named = {*case["done"], *case["requirements"], *case["expected"]["satisfied"]}
        assert named <= set(procs.steps), case["id"]
        assert len(case["requirements"]) <= MAX_REQUIREMENTS
        assert set(case["expected"]["satisfied"]) <= set(case["requirements"]), case["id"]
        assert case["expected"]["violation"] in (None, *VIOLATION_KINDS[1:]), case["id"]
        assert all(speaker in ("agent", "caller") for speaker, _ in case["dialogue"])
