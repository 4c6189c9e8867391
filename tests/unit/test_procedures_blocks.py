"""The one inline-block scanner, driven by tests/fixtures/procedure-block-cases.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.core.procedures import (
    ProcedureStep,
    ScopeSource,
    compile_procedures,
    scan,
)

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "procedure-block-cases.json").read_text()
)


def completion(step: ProcedureStep) -> str:
    if step.kind == "variable":
        return f"variable:{step.expr.source if step.expr else ''}"
    if step.kind == "judge":
        return f"judge:{step.judge}"
    if step.tool is None:
        return f"component:{step.component}"
    return f"tool:{step.tool}" + (f"@{step.component}" if step.component else "")


def test_the_fixture_file_holds_at_least_22_cases() -> None:
    assert len(CASES) >= 22
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_block_case(case: dict[str, Any]) -> None:
    procs = compile_procedures([ScopeSource("main", case["prompt"], case.get("sidecar"))])
    steps = [
        {
            "id": s.id,
            "group": s.group,
            "requires": list(s.requires),
            "completion": completion(s),
            "guidance": s.guidance,
            **({"title": s.title} if "title" in e else {}),
        }
        for s, e in zip(procs.steps.values(), case["steps"] + [{}] * len(procs.steps), strict=False)
    ]
    assert steps == case["steps"]
    assert [c.group for c in procs.checklists.values() if c.group] == case["groups"]
    assert procs.scopes["main"].prompt == case["rendered"]
    assert [i.code for i in procs.issues] == case["warnings"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_no_structural_marker_reaches_the_model(case: dict[str, Any]) -> None:
    rendered = compile_procedures([ScopeSource("main", case["prompt"], case.get("sidecar"))])
    text = rendered.scopes["main"].prompt
    for marker in ("{{#procedure", "{{/procedure", "{{/step", "{{TOOL:", "{{COMPONENT:"):
        assert marker not in text
    assert "{{#step" not in text or "bad_name" in case["warnings"]


def test_scan_reports_references_and_pills() -> None:
    scanned = scan("{{#step a}}Use {{TOOL:x}} and {{COMPONENT:Card}}.{{/step}} {{PROCEDURE:g}}")
    assert scanned.references == ("g",)
    assert scanned.steps[0].tools == ("x",)
    assert scanned.steps[0].components == ("Card",)


def test_a_reference_from_another_scope_renders_but_arms_only_where_referenced() -> None:
    procs = compile_procedures(
        [
            ScopeSource("main", "{{#procedure intake}}{{#step name}}Ask the name.{{/step}}{{/procedure}}"),
            ScopeSource("billing", "Before paying:\n{{PROCEDURE:intake}}\n", prompt_path="topics.billing.prompt"),
            ScopeSource("other", "Unrelated."),
        ]
    )
    assert procs.scopes["billing"].prompt == "Before paying:\n1. Ask the name.\n"
    assert procs.checklists["group:intake"].active_in == ("main", "billing")
    assert procs.scopes["billing"].checklists == ("group:intake",)
    assert procs.scopes["other"].checklists == ()


def test_duplicate_groups_across_scopes_first_wins_with_a_publish_error() -> None:
    procs = compile_procedures(
        [
            ScopeSource("main", "{{#procedure g}}{{#step a}}A.{{/step}}{{/procedure}}"),
            ScopeSource(
                "topic",
                "{{#procedure g}}{{#step b}}B.{{/step}}{{/procedure}}",
                prompt_path="procedures.topic.prompt",
            ),
        ]
    )
    assert list(procs.steps) == ["a"]
    [issue] = procs.issues
    assert (issue.code, issue.severity, issue.path) == (
        "duplicate_group",
        "error",
        "procedures.topic.prompt#procedure:g",
    )
    with pytest.raises(Exception, match="already defined"):
        compile_procedures(
            [ScopeSource("main", "{{#procedure g}}{{/procedure}}{{#procedure g}}{{/procedure}}")],
            strict=True,
        )
