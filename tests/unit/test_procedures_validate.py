"""Publish validation and preflight: every error and warning with its path; steward validate."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from pipecat_steward.cli.main import main
from pipecat_steward.core.procedures import IssueCode, IssueSeverity, ScopeSource
from pipecat_steward.core.procedures.validate import validate_procedures
from pipecat_steward.core.variables import VariableSpec

GATED = "{{#step ask}}Ask.{{/step}}\n{{#step pay}}Pay with {{TOOL:collect_payment}}.{{/step}}\n"
PAY = {"id": "pay", "irreversible": True}


def issues(prompt: str, procedure: dict[str, Any] | None = None, **kwargs: Any) -> list[tuple[str, str, str]]:
    report = validate_procedures([ScopeSource("main", prompt, procedure)], **kwargs)
    return [(i.severity, i.code, i.path) for i in report.issues]


def test_a_clean_procedure_has_no_issue() -> None:
    assert issues(GATED, {"steps": [PAY]}, tools=["collect_payment"]) == []


@pytest.mark.parametrize(
    ("prompt", "procedure", "kwargs", "expected"),
    [
        pytest.param(GATED, {"steps": [{"id": "ask", "requires": ["pay"]}, {"id": "pay", "requires": ["ask"]}]}, {},
                     ("error", "requires_cycle", "procedure.steps[0].requires"), id="requires cycle"),
        pytest.param(GATED, {"steps": [{"id": "ask", "requires": ["nope"]}]}, {},
                     ("error", "unknown_step", "procedure.steps[0].requires"), id="unknown step in requires"),
        pytest.param(GATED, {"steps": [{"id": "ghost"}]}, {},
                     ("error", "unknown_step", "procedure.steps[0].id"), id="settings for an unknown step"),
        pytest.param(GATED, {"steps": [PAY]}, {"tools": ["find_patient"]},
                     ("error", "unknown_tool", "procedure.steps[0]"), id="gate names a missing tool"),
        pytest.param(GATED, {"monitor": {"enabled": False}}, {},
                     ("error", "judge_with_monitor_disabled", "prompt#step:ask"), id="judge with monitor off"),
        pytest.param(GATED, None, {"variables": [VariableSpec(name="dob", extraction=True)]},
                     ("error", "extraction_without_description", "variables[0].description"),
                     id="extraction without description"),
        pytest.param(GATED, {"steps": [{"id": "ask", "expects": ["auth"]}]},
                     {"variables": [VariableSpec(name="auth", linked=True)]},
                     ("error", "linked_write", "procedure.steps[0].expects"), id="expects a linked variable"),
        pytest.param(GATED, None, {"variables": [VariableSpec(name="auth", linked=True)],
                                   "writes": {"auth": "flow.slots[2]"}},
                     ("error", "linked_write", "flow.slots[2]"), id="a slot writes a linked variable"),
        pytest.param(GATED, None,
                     {"variables": [VariableSpec(name="auth", linked=True, extraction=True, description="d")]},
                     ("error", "linked_write", "variables[0].extraction"), id="extracting a linked variable"),
        pytest.param("{{#procedure g}}{{#step a}}A.{{/step}}{{/procedure}}{{#procedure g}}{{/procedure}}",
                     None, {}, ("error", "duplicate_group", "prompt#procedure:g"), id="duplicate group"),
        pytest.param("{{#step a}}A.{{/step}}{{#step a}}B.{{/step}}", None, {},
                     ("error", "duplicate_step", "prompt#step:a"), id="duplicate step"),
        pytest.param("{{#step a}}A.{{/step}}", {"steps": [{"id": "a", "irreversible": True}]}, {},
                     ("error", "irreversible_without_tool", "procedure.steps[0]"), id="irreversible judge step"),
        pytest.param("Chat.", {"enabled": True}, {}, ("warning", "empty_procedure", "procedure"),
                     id="enabled but empty"),
        pytest.param(GATED, None, {"logic_slm_resolvable": False},
                     ("warning", "no_logic_slm", "aux.logic_slm"), id="judge without logic_slm"),
        pytest.param("Chat.", None, {"logic_slm_resolvable": False,
                                     "variables": [VariableSpec(name="dob", extraction=True, description="d")]},
                     ("warning", "no_logic_slm", "aux.logic_slm"), id="extraction without logic_slm"),
        pytest.param("See {{PROCEDURE:intake}}.", None, {}, ("warning", "unknown_reference", "prompt"),
                     id="unknown reference"),
        pytest.param("{{#step pay}}{{TOOL:collect_payment}}{{/step}}", {"steps": [PAY]}, {},
                     ("warning", "gate_without_prerequisites", "procedure.steps[0]"), id="gate binds nothing"),
        pytest.param("{{#step a}}A.", None, {}, ("warning", "unclosed_step", "prompt#a"), id="scanner recovery"),
        pytest.param(GATED, {"steps": [{"id": "ask", "complete_when": {"kind": "variable", "expr": "a ==="}}]}, {},
                     ("error", "invalid_config", "procedure"), id="expression does not parse"),
    ],
)
def test_each_error_and_warning_names_its_path(
    prompt: str, procedure: dict[str, Any] | None, kwargs: dict[str, Any], expected: tuple[str, str, str]
) -> None:
    assert expected in issues(prompt, procedure, **kwargs)


def test_an_unparsable_expression_names_the_field() -> None:
    report = validate_procedures(
        [ScopeSource("main", GATED, {"steps": [{"id": "ask", "complete_when": {"kind": "variable", "expr": "a ==="}}]})]
    )
    [issue] = report.errors
    assert "procedure.steps[0].complete_when.expr" in issue.message


def test_the_publish_severities_cover_every_code_the_issue_names() -> None:
    errors: set[IssueCode] = {
        "requires_cycle",
        "unknown_step",
        "unknown_tool",
        "judge_with_monitor_disabled",
        "extraction_without_description",
        "linked_write",
        "duplicate_group",
    }
    warnings: set[IssueCode] = {"empty_procedure", "no_logic_slm", "unknown_reference"}
    assert errors | warnings <= set(get_args(IssueCode))
    assert set(get_args(IssueSeverity)) == {"error", "warning"}


# --- steward validate ---------------------------------------------------------------------------


def write_agent(folder: Path, data: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.yaml").write_text(yaml.safe_dump(data))
    return folder


def test_steward_validate_passes_the_clinic(capsys: pytest.CaptureFixture[str]) -> None:
    clinic = Path(__file__).parents[2] / "bots" / "clinic"
    assert main(["validate", str(clinic)]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().out


def test_steward_validate_prints_every_issue_and_fails_on_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = write_agent(
        tmp_path / "bad",
        {
            "prompt": GATED + "{{PROCEDURE:nowhere}}",
            "procedure": {"steps": [PAY]},
            "procedures": {"billing": {"prompt": "{{#step ask}}Twice.{{/step}}"}},
            "variables": [{"name": "dob", "extraction": True}, {"name": "auth", "linked": True}],
            "tools": ["find_patient"],
            "flow": {
                "slots": [{"name": "auth", "ask": "Verified?"}, {"name": "x", "requires": ["nope"]}]
            },
            "aux": {"logic_slm": {"provider": "openai_compatible"}},
        },
    )
    assert main(["validate", str(agent)]) == 1
    out = capsys.readouterr().out
    for expected in (
        "error: procedure.steps[0]: irreversible step 'pay' gates tool 'collect_payment'",
        "error: variables[0].description:",
        "error: flow.slots[0]: writes linked variable 'auth'",
        "error: procedures.billing.prompt#step:ask: step id 'ask' is already used",
        "warning: prompt: {{PROCEDURE:nowhere}} names no procedure group",
        "warning: aux.logic_slm: no logic_slm stage resolves",
    ):
        assert expected in out, expected
    assert "error: flow" in out  # the flow's own cross-reference check


def test_steward_validate_reads_tool_names_from_tools_py(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    asked = {"id": "ask", "complete_when": {"kind": "variable", "expr": "asked == true"}}
    agent = write_agent(tmp_path / "ok", {"prompt": GATED, "procedure": {"steps": [asked, PAY]}})
    (agent / "tools.py").write_text("def collect_payment(amount):\n    return {}\n\ndef _private():\n    pass\n")
    assert main(["validate", str(agent)]) == 0
    (agent / "tools.py").write_text("def refund():\n    return {}\n")
    assert main(["validate", str(agent)]) == 1
    assert "unknown_tool" in capsys.readouterr().out


def test_steward_validate_without_agent_yaml_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path)]) == 2
    assert "agent.yaml" in capsys.readouterr().err


@pytest.mark.parametrize(("mode", "code"), [("closed", 1), ("open", 0)])
def test_a_closed_judge_prerequisite_without_a_logic_slm_fails_preflight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, code: int
) -> None:
    pay = {**PAY, "irreversible_fail_mode": mode}
    agent = write_agent(
        tmp_path / mode,
        {"prompt": GATED, "procedure": {"steps": [pay]}, "tools": ["collect_payment"]},
    )
    (agent / "tools.py").write_text("def collect_payment(amount):\n    return {}\n")
    assert main(["validate", str(agent)]) == code
    out = capsys.readouterr().out
    assert (
        "error: procedure.steps[0]: irreversible step 'pay' (fail mode closed) waits on "
        "judge step(s) 'ask'" in out
    ) is (mode == "closed")
    assert "warning: aux.logic_slm: no logic_slm stage resolves" in out
