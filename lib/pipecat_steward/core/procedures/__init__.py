"""Procedures: the artifact, inline blocks, the compiler, state and tool gates. Pure.

Typical use by an adapter::

    procs = compile_procedures([ScopeSource("main", prompt, config["procedure"])])
    update = start_session(procs, variables)            # seeds proc_* (setdefault)
    view = ProcedureView(procs, update.state, update.variables)
    decision = decide_gate(view, "collect_payment")
    match decision:
        case Allow(): ...                               # then the author's available_when
        case Veto(): result = decision.result()          # and remember_block(state, decision)
        case AwaitJudge(): ...                          # wait ≤ timeout_s, else resolve_timeout
    done = on_tool_result(view, "find_patient", result, call_id="c1")
"""

from pipecat_steward.core.procedures.blocks import ScannedPrompt, scan
from pipecat_steward.core.procedures.compiler import (
    MAIN,
    Checklist,
    CompiledProcedures,
    CompiledScope,
    ProcedureGate,
    ScopeSource,
    compile_procedures,
)
from pipecat_steward.core.procedures.completion import (
    ToolResultUpdate,
    Verdict,
    apply_verdict,
    on_tool_result,
    on_variables,
    remember_block,
    result_guidance,
)
from pipecat_steward.core.procedures.gates import (
    GATE_ORDER,
    JUDGE_WAIT_SECONDS,
    Allow,
    AwaitJudge,
    GateDecision,
    StepRef,
    ToolLogic,
    Veto,
    compile_tool_logic,
    decide_gate,
    decide_tool,
    describe_tool,
    prerequisite_titles,
    resolve_timeout,
)
from pipecat_steward.core.procedures.issues import Issue, IssueCode, IssueSeverity
from pipecat_steward.core.procedures.jsonpath import parse_path, select
from pipecat_steward.core.procedures.lifecycle import arm, disarm, enter_topic, start_session
from pipecat_steward.core.procedures.model import (
    FailMode,
    MonitorSettings,
    ProcedureConfig,
    StepSettings,
    load_procedure_config,
)
from pipecat_steward.core.procedures.outcome import ToolOutcome, classify_result
from pipecat_steward.core.procedures.state import (
    CURRENT_STEP,
    ProcedureState,
    ProcedureUpdate,
    ProcedureView,
    ProcedureViolation,
    StepState,
    current_step,
    done_name,
    na_name,
    step_state,
)
from pipecat_steward.core.procedures.status import procedure_status, status_reads
from pipecat_steward.core.procedures.steps import CompletionKind, ProcedureStep

__all__ = [
    "CURRENT_STEP",
    "GATE_ORDER",
    "JUDGE_WAIT_SECONDS",
    "MAIN",
    "Allow",
    "AwaitJudge",
    "Checklist",
    "CompiledProcedures",
    "CompiledScope",
    "CompletionKind",
    "FailMode",
    "GateDecision",
    "Issue",
    "IssueCode",
    "MonitorSettings",
    "ProcedureConfig",
    "ProcedureGate",
    "ProcedureState",
    "ProcedureUpdate",
    "ProcedureView",
    "ScannedPrompt",
    "ScopeSource",
    "IssueSeverity",
    "ProcedureStep",
    "StepRef",
    "StepSettings",
    "StepState",
    "ToolLogic",
    "ToolOutcome",
    "ToolResultUpdate",
    "Verdict",
    "Veto",
    "ProcedureViolation",
    "apply_verdict",
    "arm",
    "classify_result",
    "compile_procedures",
    "compile_tool_logic",
    "current_step",
    "decide_gate",
    "decide_tool",
    "describe_tool",
    "disarm",
    "done_name",
    "enter_topic",
    "load_procedure_config",
    "na_name",
    "on_tool_result",
    "on_variables",
    "parse_path",
    "prerequisite_titles",
    "procedure_status",
    "remember_block",
    "resolve_timeout",
    "result_guidance",
    "scan",
    "select",
    "start_session",
    "status_reads",
    "step_state",
]
