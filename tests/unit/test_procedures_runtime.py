"""Procedure state, completion and gates as pure functions (no clinic specifics)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from pipecat_steward.core.procedures import (
    CURRENT_STEP,
    Allow,
    AwaitJudge,
    CompiledProcedures,
    ProcedureState,
    ProcedureView,
    ProcedureViolation,
    ScopeSource,
    ToolOutcome,
    Verdict,
    Veto,
    apply_verdict,
    arm,
    classify_result,
    compile_procedures,
    compile_tool_logic,
    decide_gate,
    decide_tool,
    disarm,
    done_name,
    enter_topic,
    na_name,
    on_tool_result,
    on_variables,
    parse_path,
    procedure_status,
    remember_block,
    result_guidance,
    select,
    start_session,
)
from pipecat_steward.core.procedures.jsonpath import MISSING

PAY = {"kind": "tool", "tool": "pay"}


def compile_one(prompt: str, procedure: dict[str, Any] | None = None) -> CompiledProcedures:
    return compile_procedures([ScopeSource("main", prompt, procedure)])


LINEAR = compile_one(
    "{{#step a}}Ask A.{{/step}}{{#step b}}Ask B.{{/step}}{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
    {
        "steps": [
            {"id": "a", "complete_when": {"kind": "variable", "expr": "x == 1"}},
            {"id": "b", "complete_when": {"kind": "tool", "tool": "lookup"}},
            {"id": "pay", "irreversible": True},
        ]
    },
)


# --- arming, disarming, scopes -----------------------------------------------------------------


def test_arming_seeds_proc_variables_and_host_seeded_values_win() -> None:
    u = start_session(LINEAR, {done_name("a"): True, "unrelated": 3})
    assert u.variables[done_name("a")] is True  # the host's value is kept
    assert u.variables[done_name("b")] is False and u.variables[na_name("pay")] is False
    assert u.variables[CURRENT_STEP] == "b"
    assert u.variables["unrelated"] == 3
    assert {c.name for c in u.changes} >= {done_name("b"), CURRENT_STEP}


def test_arming_completes_variable_steps_whose_evidence_is_already_there() -> None:
    u = start_session(LINEAR, {"x": 1})
    assert u.completed == ("a",) and u.variables[CURRENT_STEP] == "b"


TOPICS = compile_procedures(
    [
        ScopeSource(
            "main", "{{#procedure intake}}{{#step name}}Ask the name.{{/step}}{{/procedure}}"
        ),
        ScopeSource(
            "booking",
            "{{#step slot}}Pick a slot.{{/step}}\n{{PROCEDURE:intake}}",
            prompt_path="procedures.booking.prompt",
        ),
        ScopeSource(
            "billing",
            "{{#step card}}Take the card.{{/step}}",
            prompt_path="procedures.billing.prompt",
        ),
    ]
)


def test_leaving_a_topic_clears_its_own_state_but_groups_keep_progress() -> None:
    u = start_session(TOPICS, {})
    u = enter_topic(ProcedureView(TOPICS, u.state, u.variables), "booking")
    assert u.state.scopes == ("main", "booking")
    u = apply_verdict(ProcedureView(TOPICS, u.state, u.variables), Verdict(satisfied=("name", "slot")))
    assert u.variables[done_name("slot")] is True and u.variables[done_name("name")] is True
    u = enter_topic(ProcedureView(TOPICS, u.state, u.variables), "billing")
    assert u.state.scopes == ("main", "billing")
    assert done_name("slot") not in u.variables  # the topic's ungrouped state is cleared
    assert u.variables[done_name("name")] is True  # the named group keeps its progress
    back = enter_topic(ProcedureView(TOPICS, u.state, u.variables), "booking")
    assert back.variables[done_name("slot")] is False and back.variables[done_name("name")] is True


def test_disarming_the_last_scope_removes_the_current_step() -> None:
    u = start_session(LINEAR, {})
    gone = disarm(ProcedureView(LINEAR, u.state, u.variables), "main")
    assert CURRENT_STEP not in gone.variables and done_name("a") not in gone.variables
    assert disarm(ProcedureView(LINEAR, gone.state, gone.variables), "main").changes == ()


def test_a_group_arms_only_where_defined_or_referenced() -> None:
    u = start_session(TOPICS, {})
    u = arm(ProcedureView(TOPICS, u.state, u.variables), "billing")
    status: Any = procedure_status(ProcedureView(TOPICS, u.state, u.variables))
    armed = {p["key"]: p["armed"] for p in status["procedures"]}
    assert armed == {"group:intake": True, "scope:booking": False, "scope:billing": True}
    intake = next(p for p in status["procedures"] if p["key"] == "group:intake")
    assert intake["active_in"] == ["main", "booking"]


# --- completion -------------------------------------------------------------------------------


def test_a_variable_write_completes_at_once_and_conditions_see_it() -> None:
    procs = compile_one(
        "{{#step a}}A.{{/step}}{{#step b}}B.{{/step}}",
        {
            "steps": [
                {"id": "a", "complete_when": {"kind": "variable", "expr": "x == 1"}},
                {"id": "b", "complete_when": {"kind": "variable", "expr": "proc_a_done and y"}},
            ]
        },
    )
    u = start_session(procs, {"y": True})
    u = on_variables(ProcedureView(procs, u.state, {**u.variables, "x": 1}), ["x"])
    assert u.completed == ("a", "b")  # b read a's completion in the same write
    assert u.variables[CURRENT_STEP] is None


def test_a_step_once_done_stays_done() -> None:
    u = start_session(LINEAR, {"x": 1})
    u = on_variables(ProcedureView(LINEAR, u.state, {**u.variables, "x": 2}), ["x"])
    assert u.variables[done_name("a")] is True


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        ({"status": "ok"}, ToolOutcome.SUCCEEDED),
        ({"data": 1}, ToolOutcome.SUCCEEDED),
        ('{"status": "done"}', ToolOutcome.SUCCEEDED),
        ({"success": False}, ToolOutcome.FAILED),
        ({"error": "card declined"}, ToolOutcome.FAILED),
        ({"status": "authorization_required"}, ToolOutcome.FAILED),
        ({"status": "requires_action"}, ToolOutcome.FAILED),
        ({"status": "capture_started"}, ToolOutcome.FAILED),
        ({"status": "setup_required"}, ToolOutcome.FAILED),
        ({"status": "Pending"}, ToolOutcome.FAILED),
        ({"status": "error"}, ToolOutcome.FAILED),
        ({"status": "blocked"}, ToolOutcome.FAILED),
    ],
)
def test_generic_tool_success(result: object, outcome: ToolOutcome) -> None:
    assert classify_result(result) is outcome


def test_result_statuses_accept_an_operation_start_but_never_an_error() -> None:
    accepted = ("pending", "capture_started", "succeeded")
    assert classify_result({"status": "capture_started"}, accepted) is ToolOutcome.SUCCEEDED
    assert classify_result({"status": "ok"}, accepted) is ToolOutcome.FAILED
    assert classify_result({"status": "pending", "error": "x"}, accepted) is ToolOutcome.FAILED
    assert classify_result({"status": "error"}, ("error",)) is ToolOutcome.FAILED


def test_result_path_needs_a_nonempty_value() -> None:
    path = "$.data.entry[0].resource.id"
    assert classify_result({"data": {"entry": [{"resource": {"id": "p1"}}]}}, None, path) is ToolOutcome.SUCCEEDED
    for empty in ({"data": {"entry": []}}, {"data": {"entry": [{"resource": {"id": " "}}]}}, {}):
        assert classify_result(empty, None, path) is ToolOutcome.EMPTY
    assert classify_result({"success": False}, None, path) is ToolOutcome.FAILED


def test_the_jsonpath_subset() -> None:
    doc = {"a": [{"b": "x"}, {"c-d": 2}], "k e": 1}
    assert parse_path("$.a[-1]['c-d']") == ("a", -1, "c-d")
    assert select(doc, parse_path("$.a[0].b")) == "x"
    assert select(doc, parse_path('$["k e"]')) == 1
    assert select(doc, parse_path("$.a[5]")) is MISSING
    assert select(doc, parse_path("$.a.b")) is MISSING
    with pytest.raises(ValueError, match="unsupported syntax at column 4"):
        parse_path("$.a[*]")
    with pytest.raises(ValueError, match="must start with"):
        parse_path("data.id")


def test_result_guidance_projects_without_writing() -> None:
    u = start_session(LINEAR, {"x": 1})
    text = result_guidance(ProcedureView(LINEAR, u.state, u.variables), "lookup", {"status": "ok"})
    assert text == "Next step — Pay: Pay with pay."
    assert u.variables[done_name("b")] is False
    assert result_guidance(ProcedureView(LINEAR, u.state, u.variables), "lookup", {"success": False}) is None
    assert result_guidance(ProcedureView(LINEAR, u.state, u.variables), "unrelated", {"status": "ok"}) is None


def test_a_disabled_monitor_or_zero_budget_suppresses_guidance() -> None:
    for monitor in ({"enabled": False}, {"max_corrections_per_step": 0}):
        procs = compile_one(
            "{{#step b}}Look up with {{TOOL:lookup}}.{{/step}}{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
            {"monitor": monitor, "steps": [{"id": "pay", "irreversible": True}]},
        )
        u = start_session(procs, {})
        veto = decide_gate(ProcedureView(procs, u.state, u.variables), "pay")
        assert isinstance(veto, Veto) and veto.guidance is None and "Next:" not in veto.message()
        assert on_tool_result(ProcedureView(procs, u.state, u.variables), "lookup", {"status": "ok"}).note is None


def test_veto_guidance_is_normalised_and_cut_at_900_characters() -> None:
    long = "word   \n " * 400
    procs = compile_one(
        f"{{{{#step a}}}}{long}{{{{/step}}}}{{{{#step pay}}}}{{{{TOOL:pay}}}}{{{{/step}}}}",
        {"steps": [{"id": "pay", "irreversible": True}]},
    )
    u = start_session(procs, {})
    veto = decide_gate(ProcedureView(procs, u.state, u.variables), "pay")
    assert isinstance(veto, AwaitJudge)  # "a" is a judge over its body
    guidance = veto.veto.guidance
    assert guidance is not None and len(guidance) <= 900 and "  " not in guidance and "\n" not in guidance


# --- verdicts -------------------------------------------------------------------------------


JUDGED = compile_one(
    "{{#step greet}}Greet.{{/step}}{{#step hardship}}Offer the hardship plan.{{/step}}"
    "{{#step pay}}Pay with {{TOOL:pay}}.{{/step}}",
    {
        "steps": [
            {
                "id": "hardship",
                "applies_when": {"kind": "llm", "prompt": "The caller mentioned hardship."},
            },
            {"id": "pay", "irreversible": True},
        ]
    },
)


def test_a_verdict_naming_an_unknown_step_is_discarded_whole() -> None:
    u = start_session(JUDGED, {})
    same = apply_verdict(ProcedureView(JUDGED, u.state, u.variables), Verdict(satisfied=("greet", "invented")))
    assert same.changes == () and same.variables[done_name("greet")] is False


def test_a_verdict_cannot_complete_a_step_whose_prerequisites_are_open() -> None:
    u = start_session(JUDGED, {})
    u = apply_verdict(ProcedureView(JUDGED, u.state, u.variables), Verdict(satisfied=("hardship",)))
    assert u.variables[done_name("hardship")] is False


def test_not_applicable_prerequisites_never_block() -> None:
    u = start_session(JUDGED, {})
    u = apply_verdict(ProcedureView(JUDGED, u.state, u.variables), Verdict(satisfied=("greet",), not_applicable=("hardship", "greet")))
    assert u.variables[na_name("hardship")] is True
    assert u.variables[na_name("greet")] is False  # greet has no llm applicability condition
    assert isinstance(decide_gate(ProcedureView(JUDGED, u.state, u.variables), "pay"), Allow)


def test_a_violation_is_recorded_as_the_checklists_last_violation() -> None:
    u = start_session(JUDGED, {})
    violation = ProcedureViolation("premature_action", "pay", "asked for the card before greeting")
    u = apply_verdict(ProcedureView(JUDGED, u.state, u.variables), Verdict(violation=violation))
    status: Any = procedure_status(ProcedureView(JUDGED, u.state, u.variables))
    assert status["procedures"][0]["last_violation"] == {
        "kind": "premature_action",
        "step": "pay",
        "detail": "asked for the card before greeting",
    }
    assert ProcedureState.from_dict(u.state.to_dict()) == u.state


# --- gates ------------------------------------------------------------------------------------


def test_a_gate_whose_own_step_does_not_apply_does_not_bind() -> None:
    procs = compile_one(
        "{{#step a}}A.{{/step}}{{#step pay}}{{TOOL:pay}}{{/step}}",
        {"steps": [{"id": "pay", "irreversible": True, "applies_when": {"kind": "code", "expr": "amount > 0"}}]},
    )
    u = start_session(procs, {"amount": 0})
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), Allow)
    assert isinstance(decide_gate(ProcedureView(procs, u.state, {**u.variables, "amount": 5}), "pay"), AwaitJudge)


def test_a_condition_that_cannot_be_evaluated_fails_open() -> None:
    procs = compile_one(
        "{{#step a}}A.{{/step}}{{#step pay}}{{TOOL:pay}}{{/step}}",
        {"steps": [{"id": "pay", "irreversible": True, "applies_when": {"kind": "code", "expr": "amount + 1"}}]},
    )
    u = start_session(procs, {"amount": "text"})  # "text" + 1 is null: undecidable, so it applies
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), AwaitJudge)


def test_a_gate_binds_only_where_its_checklist_is_armed() -> None:
    procs = compile_procedures(
        [
            ScopeSource("main", "Hello."),
            ScopeSource(
                "billing",
                "{{#step a}}A.{{/step}}{{#step pay}}{{TOOL:pay}}{{/step}}",
                {"steps": [{"id": "pay", "irreversible": True}]},
            ),
        ]
    )
    u = start_session(procs, {})
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), Allow)
    u = enter_topic(ProcedureView(procs, u.state, u.variables), "billing")
    assert isinstance(decide_gate(ProcedureView(procs, u.state, u.variables), "pay"), AwaitJudge)


def test_the_procedure_gate_runs_before_and_apart_from_available_when() -> None:
    u = start_session(LINEAR, {})
    logic = compile_tool_logic(LINEAR, {"pay": "card_on_file == true", "lookup": "true"})
    assert logic["pay"].procedure_gate is not None and logic["lookup"].procedure_gate is None
    first = decide_tool(ProcedureView(LINEAR, u.state, u.variables), "pay", logic["pay"])
    assert isinstance(first, Veto) and first.reason == "prerequisites"
    done = on_variables(ProcedureView(LINEAR, u.state, {**u.variables, "x": 1}), ["x"])
    done = on_tool_result(ProcedureView(LINEAR, done.state, done.variables), "lookup", {"status": "ok"}).update
    second = decide_tool(ProcedureView(LINEAR, done.state, done.variables), "pay", logic["pay"])
    assert isinstance(second, Veto) and second.reason == "available_when"
    assert remember_block(done.state, second) == done.state  # not a procedure veto
    third = decide_tool(ProcedureView(LINEAR, done.state, {**done.variables, "card_on_file": True}), "pay", logic["pay"])
    assert isinstance(third, Allow)


def test_a_still_blocked_tool_gets_one_note_per_new_next_step() -> None:
    u = start_session(LINEAR, {})
    veto = decide_gate(ProcedureView(LINEAR, u.state, u.variables), "pay")
    assert isinstance(veto, Veto) and veto.next_step is not None and veto.next_step.id == "a"
    state = remember_block(u.state, veto)
    moved = on_variables(ProcedureView(LINEAR, state, {**u.variables, "x": 1}), ["x"])
    r = on_tool_result(ProcedureView(LINEAR, moved.state, moved.variables), "other", {"status": "ok"})
    assert r.note == "pay is still blocked. Next: B — Ask B."
    r2 = on_tool_result(ProcedureView(LINEAR, r.update.state, r.update.variables), "other", {"status": "ok"})
    assert r2.note is None


def test_an_active_conditional_group_takes_priority_for_guidance() -> None:
    procs = compile_one(
        "{{#step ask}}Ask whether to pay now.{{/step}}{{#step charge}}Charge with {{TOOL:pay}}.{{/step}}"
        "{{#procedure review}}{{#step approve}}Get a billing approval.{{/step}}{{/procedure}}",
        {"groups": {"review": {"applies_when": {"kind": "code", "expr": "copay > 100"}}}},
    )
    u = start_session(procs, {"copay": 150})
    assert u.variables[CURRENT_STEP] == "approve"
    assert start_session(procs, {"copay": 10}).variables[CURRENT_STEP] == "ask"


def test_importing_procedures_loads_no_io_library() -> None:
    code = "import sys, pipecat_steward.core.procedures as p; print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for banned in ("asyncio'", "pipecat'", "openai'", "httpx'", "boto3'"):
        assert f"'{banned}" not in out


@pytest.mark.parametrize("order", ["evidence_first", "applies_first"])
def test_a_step_completes_when_it_starts_to_apply_on_evidence_already_there(order: str) -> None:
    procs = compile_one(
        "{{#step a}}A.{{/step}}{{#step b}}B.{{/step}}",
        {
            "steps": [
                {
                    "id": "b",
                    "complete_when": {"kind": "variable", "expr": "x == 1"},
                    "applies_when": {"kind": "code", "expr": "branch == 2"},
                }
            ]
        },
    )
    u = start_session(procs, {"branch": 0})
    writes = [("x", 1), ("branch", 2)] if order == "evidence_first" else [("branch", 2), ("x", 1)]
    variables = dict(u.variables)
    state = u.state
    for name, value in writes:
        variables[name] = value
        u = on_variables(ProcedureView(procs, state, variables), [name])
        state, variables = u.state, dict(u.variables)
    assert variables[done_name("b")] is True
