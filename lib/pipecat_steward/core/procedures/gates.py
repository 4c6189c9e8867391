"""Gate decisions for irreversible tools — the deterministic hot path (no IO, never raises).

Each irreversible tool step's prerequisites are a ``procedure_gate`` entry for its tool,
decided BEFORE the author's own ``available_when`` and never merged into it
(:func:`decide_tool`). Deterministic prerequisites decide in-process. When only judge
prerequisites remain the decision is :class:`AwaitJudge`: the adapter waits (bounded,
``timeout_s``) for a verdict, applies it with :func:`~.completion.apply_verdict`, decides
again, and on timeout calls :func:`resolve_timeout` (``closed`` vetoes, ``open`` allows and logs).

Completed, inapplicable and not-applicable prerequisites never block; a gate whose own step
does not apply, or whose checklist is not armed, does not bind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pipecat_steward.core.expressions import Expression, parse_condition
from pipecat_steward.core.procedures.compiler import CompiledProcedures, ProcedureGate
from pipecat_steward.core.procedures.model import FailMode
from pipecat_steward.core.procedures.state import (
    ProcedureState,
    ProcedureView,
    armed_checklists,
    ready,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep
from pipecat_steward.core.variables import JsonValue

__all__ = [
    "GATE_ORDER",
    "JUDGE_WAIT_SECONDS",
    "Allow",
    "AwaitJudge",
    "GateDecision",
    "StepRef",
    "ToolLogic",
    "Veto",
    "compile_tool_logic",
    "decide_gate",
    "decide_tool",
    "describe_tool",
    "guidance_enabled",
    "prerequisite_titles",
    "resolve_timeout",
]

JUDGE_WAIT_SECONDS = 8.0
GATE_ORDER = ("procedure_gate", "available_when")
"""The wrapper's gate order: the compiled procedure gate, then the author's own gate."""


@dataclass(frozen=True, slots=True)
class StepRef:
    """A step as a veto names it."""

    id: str
    title: str


@dataclass(frozen=True, slots=True)
class Allow:
    """Run the tool. ``log`` says why, when an open fail mode let it through."""

    tool: str
    log: str | None = None


@dataclass(frozen=True, slots=True)
class Veto:
    """Do not run the tool; return :meth:`result` as its informative tool result.

    Attributes:
        open_steps: The prerequisites still open, in document order.
        next_step: The next ready prerequisite (or ready ancestor) whose guidance is given.
        guidance: That step's guidance, whitespace-normalised, at most 900 characters
            (None when its checklist's monitor is off or its correction budget is zero).
        reason: ``prerequisites`` (a prerequisite is open), ``judge_timeout`` (the judge did
            not answer in time), ``monitor_unavailable`` (no judge is attached),
            ``already_done`` (a completed irreversible step: no repeat) or ``available_when``.
        earlier: For ``already_done``, the summary of the result that completed the step.
    """

    tool: str
    open_steps: tuple[StepRef, ...] = ()
    next_step: StepRef | None = None
    guidance: str | None = None
    reason: str = "prerequisites"
    earlier: str | None = None

    def message(self) -> str:
        """The refusal text the model reads."""
        if self.reason == "available_when":
            return f"{self.tool} is not available right now; do not retry it yet."
        if self.reason == "already_done":
            names = "; ".join(s.title for s in self.open_steps)
            earlier = f" (earlier result: {self.earlier})" if self.earlier else ""
            return (
                f"{self.tool} was not run: {names} is already done{earlier}. It must not "
                "be repeated; tell the caller it was already done."
            )
        names = "; ".join(s.title for s in self.open_steps)
        text = f"{self.tool} was not run: these steps must be completed first: {names}."
        text += _CAUSES.get(self.reason, "")
        if self.next_step and self.guidance:
            text += f" Next: {self.next_step.title} — {self.guidance}"
        return text

    def result(self) -> dict[str, JsonValue]:
        """The tool result a wrapper returns instead of running the tool."""
        return {
            "status": "blocked",
            "success": False,
            "error": self.message(),
            "open_prerequisites": [s.id for s in self.open_steps],
            "next_step": self.next_step.id if self.next_step else None,
            "reason": self.reason,
            **({"earlier_result": self.earlier} if self.earlier else {}),
        }


_CAUSES = {
    "judge_timeout": " They could not be confirmed in time.",
    "monitor_unavailable": " No procedure monitor is available to confirm them.",
}


@dataclass(frozen=True, slots=True)
class AwaitJudge:
    """Only judge prerequisites remain: wait at most ``timeout_s`` for a verdict.

    Attributes:
        steps: The judge prerequisites to settle.
        fail_mode: What a timeout does (``closed`` if any gated step is closed).
        veto: The veto a closed timeout returns.
    """

    tool: str
    steps: tuple[str, ...]
    fail_mode: FailMode
    veto: Veto
    timeout_s: float = JUDGE_WAIT_SECONDS


GateDecision = Allow | Veto | AwaitJudge


def resolve_timeout(pending: AwaitJudge, cause: str = "judge_timeout") -> Allow | Veto:
    """The decision when no verdict settled the judge prerequisites.

    Args:
        pending: The waiting decision.
        cause: Why nothing settled them, named by a closed veto: ``judge_timeout`` (no answer
            in time), ``monitor_unavailable`` (no judge attached) or ``prerequisites`` (the
            judge answered and the steps are still open).
    """
    match pending.fail_mode:
        case FailMode.CLOSED:
            return replace(pending.veto, reason=cause)
        case FailMode.OPEN:
            steps = ", ".join(pending.steps)
            log = f"{pending.tool}: judge prerequisites {steps} unsettled after "
            return Allow(pending.tool, log + f"{pending.timeout_s:g}s; fail mode open allows it")


def guidance_enabled(procs: CompiledProcedures, step: ProcedureStep) -> bool:
    """Whether guidance from this step's checklist may be given (monitor on, budget > 0)."""
    monitor = procs.checklists[step.checklist].monitor
    return monitor.enabled and monitor.max_corrections_per_step > 0


def decide_gate(view: ProcedureView, tool: str) -> GateDecision:
    """Decide the ``procedure_gate`` of ``tool`` from state alone; never raises.

    Returns:
        ``Allow``, ``Veto`` (a deterministic prerequisite is open) or ``AwaitJudge`` (only
        judge prerequisites are open).
    """
    gate = view.procs.gates.get(tool)
    if gate is None:
        return Allow(tool)
    try:
        return _decide(view.procs, view.state, view.variables, gate)
    except Exception as exc:  # a gate never raises; an internal fault keeps the tool closed
        return Veto(tool, reason=f"internal error: {type(exc).__name__}")


def _decide(
    procs: CompiledProcedures,
    state: ProcedureState,
    variables: Mapping[str, object],
    gate: ProcedureGate,
) -> GateDecision:
    armed = set(armed_checklists(procs, state))
    repeat = _repeat_veto(procs, state, variables, gate, armed)
    if repeat is not None:
        return repeat
    blocking: dict[str, ProcedureStep] = {}
    modes: set[FailMode] = set()
    for step_id in gate.steps:
        step = procs.steps[step_id]
        if step.checklist not in armed or step_state(step, variables) != "open":
            continue  # not armed here, already done, or does not apply: the gate does not bind
        for ancestor in procs.ancestors[step_id]:
            prereq = procs.steps[ancestor]
            if step_state(prereq, variables) == "open":
                blocking[ancestor] = prereq
                modes.add(step.fail_mode)
    if not blocking:
        return Allow(gate.tool)
    veto = _veto(procs, variables, gate.tool, tuple(blocking.values()))
    if any(s.deterministic for s in blocking.values()):
        return veto
    mode = FailMode.CLOSED if FailMode.CLOSED in modes else FailMode.OPEN
    veto = Veto(veto.tool, veto.open_steps, veto.next_step, veto.guidance, "judge_timeout")
    return AwaitJudge(gate.tool, tuple(blocking), mode, veto)


def _repeat_veto(
    procs: CompiledProcedures,
    state: ProcedureState,
    variables: Mapping[str, object],
    gate: ProcedureGate,
    armed: set[str],
) -> Veto | None:
    """A completed, non-repeatable irreversible step vetoes its tool (no double charge)."""
    steps = [procs.steps[s] for s in gate.steps if procs.steps[s].checklist in armed]
    if any(step_state(s, variables) == "open" for s in steps):
        return None  # another armed step still needs the tool
    done = [s for s in steps if not s.repeatable and step_state(s, variables) == "done"]
    if not done:
        return None
    refs = tuple(StepRef(s.id, s.title) for s in done)
    return Veto(gate.tool, refs, reason="already_done", earlier=state.receipt(done[0].id))


def _veto(
    procs: CompiledProcedures,
    variables: Mapping[str, object],
    tool: str,
    blocking: tuple[ProcedureStep, ...],
) -> Veto:
    refs = tuple(StepRef(s.id, s.title) for s in blocking)
    nxt = next((s for s in blocking if ready(procs, s, variables)), blocking[0])
    guidance = nxt.short_guidance if guidance_enabled(procs, nxt) else None
    return Veto(tool, refs, StepRef(nxt.id, nxt.title), guidance or None)


def prerequisite_titles(procs: CompiledProcedures, tool: str) -> tuple[str, ...]:
    """Titles of every prerequisite of the irreversible steps gated on ``tool``."""
    gate = procs.gates.get(tool)
    ids = [a for step_id in (gate.steps if gate else ()) for a in procs.ancestors[step_id]]
    return tuple(procs.steps[i].title for i in dict.fromkeys(ids))


def describe_tool(procs: CompiledProcedures, tool: str, description: str) -> str:
    """The tool description advertising its prerequisites before tool selection."""
    titles = prerequisite_titles(procs, tool)
    if not titles:
        return description
    sep = " " if description and not description.endswith(" ") else ""
    return f"{description}{sep}Only after these steps are complete: {'; '.join(titles)}."


@dataclass(frozen=True, slots=True)
class ToolLogic:
    """A tool's gates, kept separate: the procedure gate runs before ``available_when``."""

    procedure_gate: ProcedureGate | None = None
    available_when: Expression | None = None


def compile_tool_logic(
    procs: CompiledProcedures, available_when: Mapping[str, str]
) -> dict[str, ToolLogic]:
    """Pair each tool's compiled ``procedure_gate`` with the author's own ``available_when``.

    Raises:
        ExpressionError: An ``available_when`` does not parse.
    """
    tools = dict.fromkeys([*procs.gates, *available_when])
    return {
        tool: ToolLogic(
            procs.gates.get(tool),
            parse_condition(available_when[tool]) if tool in available_when else None,
        )
        for tool in tools
    }


def decide_tool(view: ProcedureView, tool: str, logic: ToolLogic | None) -> GateDecision:
    """The procedure gate first; only if it allows, the author's ``available_when``."""
    decision = decide_gate(view, tool)
    if not isinstance(decision, Allow) or logic is None or logic.available_when is None:
        return decision
    if logic.available_when.truthy(view.variables):
        return decision
    return Veto(tool, reason="available_when")
