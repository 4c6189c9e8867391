"""Completion as pure functions: variable writes, tool results and injected judge verdicts.

Every completion is a blackboard write (``proc_<id>_done = true`` and ``proc_current_step``),
returned in a :class:`~.state.ProcedureUpdate`, so conditions and gates see it at once.
Variable and tool steps complete with zero model calls the moment their evidence arrives;
judge steps complete only through :func:`apply_verdict` (a verdict of the monitor).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.gates import Allow, Veto, decide_gate, guidance_enabled
from pipecat_steward.core.procedures.outcome import ToolOutcome, classify_result, result_mapping
from pipecat_steward.core.procedures.state import (
    CURRENT_STEP,
    BlockedTool,
    ProcedureState,
    ProcedureUpdate,
    ProcedureView,
    ProcedureViolation,
    Writer,
    applies_reads,
    armed_checklists,
    armed_steps,
    current_step,
    done_name,
    na_name,
    ready,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep

__all__ = [
    "ToolResultUpdate",
    "Verdict",
    "apply_verdict",
    "on_tool_result",
    "on_variables",
    "remember_block",
    "result_guidance",
    "settle_variables",
    "sync_current",
]


def sync_current(procs: CompiledProcedures, state: ProcedureState, writer: Writer) -> None:
    """Write ``proc_current_step`` from the current variables."""
    step = current_step(procs, state, writer.variables)
    writer.set(CURRENT_STEP, step.id if step else None)


def settle_variables(
    procs: CompiledProcedures, state: ProcedureState, writer: Writer, changed: set[str] | None
) -> None:
    """Complete every armed open variable step whose condition now holds (to a fixpoint)."""
    before = len(writer.completed)
    watch = changed
    while True:
        done = [
            s
            for s in armed_steps(procs, state)
            if s.kind == "variable"
            and s.expr is not None
            and (watch is None or _reads(s) & watch)
            and step_state(s, writer.variables) == "open"
            and s.expr.truthy(writer.variables)
        ]
        if not done:
            break
        for step in done:
            writer.complete(step.id)
        watch = {done_name(s.id) for s in done}
    if len(writer.completed) > before:
        sync_current(procs, state, writer)


def _reads(step: ProcedureStep) -> frozenset[str]:
    """The names a variable step's state depends on: its condition and its applicability.

    A step whose evidence arrived while it did not apply completes when it starts to apply.
    """
    names = step.expr.names if step.expr is not None else frozenset[str]()
    return names | applies_reads(step)


def on_variables(view: ProcedureView, changed: Iterable[str] | None = None) -> ProcedureUpdate:
    """Re-evaluate variable steps after a blackboard write.

    Args:
        view: The compiled procedures, the procedure state and the blackboard after the write.
        changed: The names written (None re-evaluates every variable step).
    """
    writer = Writer.over(view.variables)
    settle_variables(view.procs, view.state, writer, set(changed) if changed is not None else None)
    return writer.update(view.state)


@dataclass(frozen=True, slots=True)
class ToolResultUpdate:
    """What a tool result did: the update, per-step outcomes and one note for the model.

    Attributes:
        update: New state and variables (completions written).
        outcomes: ``(step id, outcome)`` for each armed open tool step the result matched.
        note: Text to carry on the tool result (empty-result recovery, the next step's
            guidance, or a "you may now resume" note), or None.
    """

    update: ProcedureUpdate
    outcomes: tuple[tuple[str, ToolOutcome], ...] = ()
    note: str | None = None


def _matches(step: ProcedureStep, tool: str, component: str | None) -> bool:
    if step.kind != "tool":
        return False
    return (step.tool is None or step.tool == tool) and (
        step.component is None or step.component == component
    )


def _component(result: object, component: str | None) -> str | None:
    if component is not None:
        return component
    data = result_mapping(result)
    value = data.get("component") if data else None
    return value if isinstance(value, str) else None


def _tool_steps(view: ProcedureView, tool: str, component: str | None) -> list[ProcedureStep]:
    return [
        s
        for s in armed_steps(view.procs, view.state)
        if _matches(s, tool, component) and step_state(s, view.variables) == "open"
    ]


def on_tool_result(
    view: ProcedureView,
    tool: str,
    result: object,
    *,
    call_id: str | None = None,
    component: str | None = None,
) -> ToolResultUpdate:
    """Apply one tool result: complete matching tool steps and compose the result's note.

    Args:
        view: The compiled procedures, the procedure state and the blackboard.
        tool: The tool that returned.
        result: Its result.
        call_id: The tool-call id (the same id keeps the same empty-result number).
        component: The component the call rendered (else read from ``result["component"]``).
    """
    procs, state = view.procs, view.state
    steps = _tool_steps(view, tool, _component(result, component))
    outcomes = [(s.id, classify_result(result, s.result_statuses, s.result_path)) for s in steps]
    done = [procs.steps[i] for i, o in outcomes if o is ToolOutcome.SUCCEEDED]
    guidance = _next_guidance(view, done)
    writer = Writer.over(view.variables)
    for step_id, outcome in outcomes:
        if outcome is ToolOutcome.SUCCEEDED:
            state = _record_violation(
                procs, state, _out_of_order(procs, step_id, writer.variables), writer.variables
            )
            writer.complete(step_id)
            if procs.steps[step_id].irreversible:
                state = _keep_receipt(state, step_id, result)
    if writer.completed:
        sync_current(procs, state, writer)
        settle_variables(procs, state, writer, {done_name(s) for s in writer.completed})
    empty = next((procs.steps[i] for i, o in outcomes if o is ToolOutcome.EMPTY), None)
    state, empty_note = _empty_note(procs, state, empty, call_id)
    state, resume = _blocked_note(ProcedureView(procs, state, writer.variables))
    notes = [n for n in (empty_note or guidance, resume) if n]
    return ToolResultUpdate(writer.update(state), tuple(outcomes), "\n".join(notes) or None)


def _out_of_order(
    procs: CompiledProcedures, step_id: str, variables: Mapping[str, object]
) -> ProcedureViolation | None:
    """A tool step completing while a prerequisite of any kind is still open: a violation."""
    skipped = [
        procs.steps[a]
        for a in procs.ancestors[step_id]
        if step_state(procs.steps[a], variables) == "open"
    ]
    if not skipped:
        return None
    names = ", ".join(s.title for s in skipped)
    detail = f"'{procs.steps[step_id].title}' was done before: {names}"
    return ProcedureViolation("skipped_step", step_id, detail)


_RECEIPT_KEYS = frozenset(
    {"status", "receipt", "id", "amount", "total", "confirmation", "reference", "transaction_id"}
)


def _keep_receipt(state: ProcedureState, step_id: str, result: object) -> ProcedureState:
    """Remember a short summary of an irreversible step's completing result."""
    data = result_mapping(result) or {}
    parts = [
        f"{k}={v}"
        for k, v in data.items()
        if isinstance(v, (str, int, float)) and (k in _RECEIPT_KEYS or k.endswith("_id"))
    ]
    summary = ", ".join(parts)[:200] or str(result)[:120]
    kept = tuple(r for r in state.receipts if r[0] != step_id)
    return replace(state, receipts=(*kept, (step_id, summary)))


def result_guidance(
    view: ProcedureView,
    tool: str,
    result: object,
    *,
    component: str | None = None,
) -> str | None:
    """The next eligible step's guidance for a successful result of a procedure tool.

    Chosen on a projected snapshot in which this result's steps count as done; nothing is
    written. None for a tool no step names, a result that completes nothing, or when the
    next step's monitor is off or its correction budget is zero.
    """
    steps = _tool_steps(view, tool, _component(result, component))
    done = [
        s
        for s in steps
        if classify_result(result, s.result_statuses, s.result_path) is ToolOutcome.SUCCEEDED
    ]
    return _next_guidance(view, done)


def _next_guidance(view: ProcedureView, done: Sequence[ProcedureStep]) -> str | None:
    """The guidance of the step that is current once ``done`` count as completed."""
    if not done:
        return None
    projected = {**view.variables, **{done_name(s.id): True for s in done}}
    nxt = current_step(view.procs, view.state, projected)
    if nxt is None or not guidance_enabled(view.procs, nxt) or not nxt.short_guidance:
        return None
    return f"Next step — {nxt.title}: {nxt.short_guidance}"


def _empty_note(
    procs: CompiledProcedures,
    state: ProcedureState,
    step: ProcedureStep | None,
    call_id: str | None,
) -> tuple[ProcedureState, str | None]:
    if step is None:
        return state, None
    seen = state.empty_results
    if call_id is not None and (step.id, call_id) not in seen:
        seen = (*seen, (step.id, call_id))
        state = replace(state, empty_results=seen)
    mine = [c for s, c in seen if s == step.id]
    number = f" (empty result #{mine.index(call_id) + 1} this visit)" if call_id in mine else ""
    note = (
        f"The call succeeded but returned no matching record{number}; step "
        f"'{step.title}' stays open. Do not advance or invent a record."
    )
    if guidance_enabled(procs, step) and step.short_guidance:
        note += f" Follow its guidance: {step.short_guidance}"
    return state, note


def remember_block(state: ProcedureState, veto: Veto) -> ProcedureState:
    """Remember a vetoed tool (never its arguments) for one later "you may now resume" note."""
    if veto.reason in ("available_when", "already_done") or any(
        b.tool == veto.tool for b in state.blocked
    ):
        return state
    noted = veto.next_step.id if veto.next_step else None
    return replace(state, blocked=(*state.blocked, BlockedTool(veto.tool, noted)))


def _blocked_note(view: ProcedureView) -> tuple[ProcedureState, str | None]:
    kept: list[BlockedTool] = []
    note: str | None = None
    for blocked in view.state.blocked:
        decision = decide_gate(view, blocked.tool)
        if isinstance(decision, Allow):
            note = note or _resume_text(view.procs, blocked.tool)
            continue
        if isinstance(decision, Veto) and note is None:
            note, blocked = _still_blocked(blocked, decision)
        kept.append(blocked)
    return replace(view.state, blocked=tuple(kept)), note


def _still_blocked(blocked: BlockedTool, veto: Veto) -> tuple[str | None, BlockedTool]:
    nxt = veto.next_step
    if nxt is None or nxt.id == blocked.noted or not veto.guidance:
        return None, blocked
    note = f"{blocked.tool} is still blocked. Next: {nxt.title} — {veto.guidance}"
    return note, BlockedTool(blocked.tool, nxt.id)


def _resume_text(procs: CompiledProcedures, tool: str) -> str | None:
    gate = procs.gates.get(tool)
    if gate is None or not any(guidance_enabled(procs, procs.steps[s]) for s in gate.steps):
        return None
    return (
        f"You may now resume {tool}: its prerequisite steps are complete. Go ahead only "
        "with the caller's consent and the tool's usual checks."
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge verdict injected by the monitor or a test.

    Attributes:
        satisfied: Judge steps the verdict found satisfied (with cited evidence).
        not_applicable: Steps with an ``llm`` applicability condition judged not to apply.
        violation: A finding to record as the checklist's ``last_violation``.
    """

    satisfied: tuple[str, ...] = ()
    not_applicable: tuple[str, ...] = ()
    violation: ProcedureViolation | None = None


def apply_verdict(view: ProcedureView, verdict: Verdict) -> ProcedureUpdate:
    """Apply a verdict; a verdict naming an undeclared step is discarded whole.

    Only armed judge steps whose prerequisites are settled complete; only steps with an
    ``llm`` applicability condition become not applicable (sticky ``proc_<id>_na``).
    """
    procs, state, variables = view.procs, view.state, view.variables
    named = (*verdict.satisfied, *verdict.not_applicable)
    step = verdict.violation.step if verdict.violation else None
    if any(n not in procs.steps for n in named) or (step is not None and step not in procs.steps):
        return ProcedureUpdate(state, variables)
    armed = set(armed_checklists(procs, state))
    writer = Writer.over(variables)
    for step_id in verdict.not_applicable:
        s = procs.steps[step_id]
        if s.checklist in armed and s.applies_llm and step_state(s, variables) == "open":
            writer.set(na_name(step_id), True)
    for step_id in verdict.satisfied:
        s = procs.steps[step_id]
        if s.checklist in armed and s.kind == "judge" and ready(procs, s, writer.variables):
            writer.complete(step_id)
    sync_current(procs, state, writer)
    settle_variables(procs, state, writer, {done_name(s) for s in writer.completed})
    return writer.update(_record_violation(procs, state, verdict.violation, writer.variables))


def _record_violation(
    procs: CompiledProcedures,
    state: ProcedureState,
    violation: ProcedureViolation | None,
    variables: Mapping[str, object],
) -> ProcedureState:
    if violation is None:
        return state
    owner = procs.steps[violation.step] if violation.step else current_step(procs, state, variables)
    if owner is None:
        return state
    rest = tuple((k, v) for k, v in state.violations if k != owner.checklist)
    return replace(state, violations=(*rest, (owner.checklist, violation)))
