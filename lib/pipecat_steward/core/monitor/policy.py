"""When the monitor asks the SLM: deterministic first, the model only for fuzzy judgments.

:func:`decide_assessment` looks at one moment of the conversation (the assistant finished its
text, or the caller's final transcript arrived) and returns an :class:`Assess` naming why, or
:class:`Skip`. The SLM runs only when

- the current step is a judge step, or an open step carries an ``llm`` applicability
  condition, and its exchange is under way (the agent has spoken since the step became
  current and the caller answered after that) — the moment a verdict can change; or
- a drift heuristic fires on the assistant's text: completion-claim language (including record
  claims without words such as "completed") while a required step is open and no tool result
  of this turn backs it, or a tool of a later step ran while an earlier judge step is open.

Everything here is pure; the adapter keeps the :class:`Exchange` per step and the time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pipecat_steward.core.procedures.compiler import CompiledProcedures
from pipecat_steward.core.procedures.state import (
    ProcedureView,
    armed_checklists,
    armed_steps,
    ready,
    step_state,
)
from pipecat_steward.core.procedures.steps import ProcedureStep
from pipecat_steward.core.words import word_set

__all__ = [
    "MAX_REQUIREMENTS",
    "Assess",
    "AssessReason",
    "Decision",
    "Exchange",
    "Moment",
    "Skip",
    "claim_backed",
    "claims_completion",
    "decide_assessment",
    "is_question",
    "judge_requirements",
    "monitored",
    "out_of_order_tools",
    "promises_action",
]

MAX_REQUIREMENTS = 3
_CLAIM = re.compile(
    r"\b(done|completed?|finished|all set|taken care of|processed|charged|paid|booked|"
    r"scheduled|confirmed|verified|submitted|approved|recorded|updated|attached|"
    r"(i'?ve|i have|we'?ve|we have) (sent|found|pulled|located|booked|charged|updated|"
    r"attached|checked|looked|verified|confirmed|processed|scheduled|sent))\b",
    re.I,
)
_RECORD_CLAIM = re.compile(
    r"\b((found|see|have|located|pulled up) (you|your|the) (record|file|account|appointment|"
    r"booking|reservation|details|visit|chart)|found you|"
    r"your (next )?(appointment|visit|booking|reservation|payment|record|order|refund) "
    r"(is|was|has been|will be|for))\b",
    re.I,
)
_PROMISE = re.compile(
    r"\b(i'?ll|i will|let me|i'?m going to|i am going to|i'?m (now )?(sending|looking|checking|"
    r"pulling|opening|booking|charging|processing)|one moment while i)\b",
    re.I,
)
_ACTION = re.compile(
    r"\b(send|sending|look|looking|check|checking|pull|pulling|open|opening|book|booking|"
    r"charge|charging|process|processing|attach|schedule|search|find|run|submit|email|text)\b",
    re.I,
)


Moment = Literal["assistant_text", "caller_final", "gate"]
"""The conversational moment at which an assessment may start."""

AssessReason = Literal["judge_step", "llm_applies", "completion_claim", "out_of_order", "gate"]
"""Why the SLM is consulted."""


@dataclass(frozen=True, slots=True)
class Assess:
    """Ask the SLM, for ``reason``, about ``steps`` (at most three judge requirements)."""

    reason: AssessReason
    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Skip:
    """No model call; ``why`` names the rule (for the trace)."""

    why: str


Decision = Assess | Skip


@dataclass(frozen=True, slots=True)
class Exchange:
    """What happened since the current step became current (kept by the adapter).

    Attributes:
        step: The step this exchange belongs to.
        agent_spoke: The agent has spoken since the step became current.
        caller_answered: The caller spoke after the agent did; from then on every new
            utterance may change the verdict (the cache absorbs repeats).
    """

    step: str | None = None
    agent_spoke: bool = False
    caller_answered: bool = False

    def follow(self, step: str | None) -> Exchange:
        """The exchange for ``step`` (a fresh one when the current step moved)."""
        return self if step == self.step else Exchange(step)

    def heard(self, moment: Moment) -> Exchange:
        """Record the agent's text or the caller's final transcript."""
        if moment == "assistant_text":
            return Exchange(self.step, True, self.caller_answered)
        if moment == "caller_final" and self.agent_spoke:
            return Exchange(self.step, True, True)
        return self


def monitored(procs: CompiledProcedures, step: ProcedureStep) -> bool:
    """Whether the step's checklist has its monitor enabled."""
    return procs.checklists[step.checklist].monitor.enabled


def _open_llm_applies(view: ProcedureView) -> list[ProcedureStep]:
    return [
        s
        for s in armed_steps(view.procs, view.state)
        if s.applies_llm and step_state(s, view.variables) == "open" and monitored(view.procs, s)
    ]


def judge_requirements(view: ProcedureView, focus: tuple[str, ...] = ()) -> tuple[str, ...]:
    """At most three eligible requirements: ``focus``, the current judge step, llm conditions."""
    current = view.current()
    ids = [s for s in focus if s in view.procs.steps]
    if current is not None and current.kind == "judge" and monitored(view.procs, current):
        ids.append(current.id)
    ids += [s.id for s in _open_llm_applies(view)]
    return tuple(dict.fromkeys(ids))[:MAX_REQUIREMENTS]


def claims_completion(text: str) -> bool:
    """Completion-claim or record-claim language ("I've booked it", "your appointment is")."""
    return bool(_CLAIM.search(text) or _RECORD_CLAIM.search(text))


_WORDS = re.compile(r"[a-z]+")
_SUFFIXES = ("ments", "ment", "ing", "ed", "es", "s")
_GENERIC = word_set(
    "the and for with your you our this that has have been was were are now all ask take get "
    "make send call tell give about step done set"
)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _vocabulary(text: str) -> frozenset[str]:
    words = _WORDS.findall(text.lower().replace("_", " "))
    return frozenset(_stem(w) for w in words if len(w) >= 3 and w not in _GENERIC)


def _step_vocabulary(step: ProcedureStep) -> frozenset[str]:
    return _vocabulary(f"{step.id} {step.title} {step.tool or ''} {step.component or ''}")


def claim_backed(view: ProcedureView, text: str, tools: tuple[str, ...]) -> bool:
    """Whether a completion claim is backed by the tools that acted this turn.

    A claim is never backed while a step its claim sentences name (by title, id or tool) is
    ready and still open: an unrelated tool's success does not make "your copay has been charged" true.
    Otherwise it is backed when a tool acted this turn.
    """
    armed = armed_steps(view.procs, view.state)
    claims = [c for c in re.split(r"(?<=[.!?;])\s+", text) if claims_completion(c)]
    said = _vocabulary(" ".join(claims))
    if any(said & _step_vocabulary(s) and ready(view.procs, s, view.variables) for s in armed):
        return False
    return bool(tools)


def is_question(text: str) -> bool:
    """Whether the text ends by asking the caller something."""
    return text.rstrip().rstrip("\"')").endswith("?")


def promises_action(text: str) -> bool:
    """A promise of a tool action ("I'll send the camera widget"), never a question."""
    if is_question(text):
        return False
    return any(_PROMISE.search(s) and _ACTION.search(s) for s in re.split(r"(?<=[.!])\s+", text))


def decide_assessment(
    view: ProcedureView,
    moment: Moment,
    *,
    text: str = "",
    exchange: Exchange = Exchange(),
    backed: bool = False,
    out_of_order: tuple[str, ...] = (),
) -> Decision:
    """Decide whether this moment needs an SLM assessment.

    Args:
        view: The compiled procedures, the procedure state and the blackboard.
        moment: The assistant finished its text, or the caller's final transcript arrived.
        text: The assistant's text (for the drift heuristics).
        exchange: The current step's exchange, already updated with this moment.
        backed: A non-error tool result arrived since the caller's last turn.
        out_of_order: Tools of this turn that belong to steps after an open step.
    """
    current = view.current()
    if current is None or not monitored(view.procs, current):
        return Skip("no monitored open step")
    steps = judge_requirements(view)
    if steps and exchange.step == current.id and exchange.caller_answered:  # both sides spoke
        reason = "judge_step" if current.id in steps else "llm_applies"
        return Assess(reason, steps)
    if moment != "assistant_text":
        return Skip("exchange not under way")
    if claims_completion(text) and not backed:
        return Assess("completion_claim", steps)
    if out_of_order:
        return Assess("out_of_order", steps)
    return Skip("no drift")


def out_of_order_tools(view: ProcedureView, tools: tuple[str, ...]) -> tuple[str, ...]:
    """Tools whose step has an open judge ancestor (acting before a fuzzy prerequisite)."""
    procs = view.procs
    armed = set(armed_checklists(procs, view.state))
    out: list[str] = []
    for tool in tools:
        owners = [s for s in procs.steps.values() if s.tool == tool and s.checklist in armed]
        if any(_open_judge_ancestor(procs, s, view.variables) for s in owners):
            out.append(tool)
    return tuple(out)


def _open_judge_ancestor(
    procs: CompiledProcedures, step: ProcedureStep, variables: Mapping[str, object]
) -> bool:
    ancestors = (procs.steps[a] for a in procs.ancestors.get(step.id, ()))
    return any(a.kind == "judge" and step_state(a, variables) == "open" for a in ancestors)
