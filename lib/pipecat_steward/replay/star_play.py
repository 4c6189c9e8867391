"""Playing one STAR dialogue through a compiled procedure with the real runtime and gates.

The session is the runtime's own :class:`~pipecat_steward.runtime.supervision.Supervisor` (the
wrapper the engine uses); nothing here calls a model. The evidence rules, in order:

1. A wizard ``pick_suggestion`` of an inform step completes it (the wizard told it). Wizard
   free text whose words are closest to one step's template counts as picking that step (the
   *echo rule*, :mod:`.star_echo`; the live runtime's judge plays this part).
2. A wizard ``pick_suggestion`` of an ask step marks it asked; the next user utterance
   completes every asked step (the *ask rule*: an answer follows the question).
3. A user utterance that supplies a field the step collects completes it (the *extraction
   stand-in*: which turn supplies which field is decided once per dialogue by
   :mod:`.star_evidence`; which fields a step collects, by :mod:`.star_bind`).
4. A wizard ``query`` is a tool call: the branch it starts is marked taken, then the compiled
   gate decides. The gold dialogue goes on either way, so the result is applied after a veto
   too (the veto is what is measured).
5. ``return_item`` is the call's result: it completes the query step and, for a query with
   outcome branches, first marks the success or failure branch (no item, or an item whose
   text says unavailable / failed / cannot, is a failure).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pipecat_steward.core.procedures import (
    CURRENT_STEP,
    Allow,
    Veto,
    compile_tool_logic,
    done_name,
)
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.replay.star_compile import StarProcedure, branch, said
from pipecat_steward.replay.star_data import constraint_values, heard
from pipecat_steward.replay.star_echo import EchoMatcher
from pipecat_steward.runtime.supervision import Supervisor

__all__ = ["GateCall", "Player", "query_label"]

_NEGATIVE = re.compile(r"\b(unavailable|not available|fail\w*|cannot|can't|unable|no \w+ found)\b")


@dataclass(frozen=True, slots=True)
class GateCall:
    """One gold query put to the gate.

    Attributes:
        index: The query's event index.
        label: The query label it maps to.
        allowed: Whether the gate allowed it.
        open_steps: The open prerequisites a veto named.
        message: The veto text the model would read.
        next_step: The prerequisite whose guidance the veto gave.
    """

    index: int
    label: str
    allowed: bool
    open_steps: tuple[str, ...] = ()
    message: str = ""
    next_step: str | None = None


def query_label(proc: StarProcedure, constraints: Mapping[str, str], done: set[str]) -> str:
    """Map a query event to a query label.

    The only one; else the one whose kind a constraint value names (``query_check`` for
    ``RequestType: "Check"``); else the first not yet done.
    """
    queries = proc.queries
    if len(queries) == 1:
        return queries[0]
    values = {v for raw in constraints.values() for v in constraint_values(raw)}
    named = [q for q in queries if q.removeprefix("query_").lower() in values]
    if named:
        return named[0]
    return next((q for q in queries if q not in done), queries[-1])


@dataclass
class Player:
    """One task's procedure inside one dialogue."""

    proc: StarProcedure
    upcoming: Sequence[Mapping[str, str]]
    given: Sequence[frozenset[str]]
    echo: EchoMatcher | None = None
    sup: Supervisor = field(init=False)
    variables: dict[str, JsonValue] = field(init=False)
    asked: list[tuple[str, int]] = field(default_factory=lambda: [])
    calls: list[GateCall] = field(default_factory=lambda: [])
    done_at: dict[str, int] = field(default_factory=lambda: {})
    answered_by: dict[str, int] = field(default_factory=lambda: {})
    ask_checks: list[tuple[str, str]] = field(default_factory=lambda: [])
    pending_query: str | None = None
    guided: list[tuple[int, str | None]] = field(default_factory=lambda: [])

    def __post_init__(self) -> None:
        procs = self.proc.procs
        self.sup = Supervisor(procs, compile_tool_logic(procs, {}))
        self.variables = self.sup.start(dict(self.proc.variables))

    @property
    def current(self) -> str | None:
        """The checklist's current step (the runtime's ``proc_current_step``)."""
        value = self.variables.get(CURRENT_STEP)
        return value if isinstance(value, str) else None

    def done(self) -> set[str]:
        """The steps done now."""
        return {s for s in self.proc.steps if self.variables.get(done_name(s)) is True}

    def _set(self, index: int, names: dict[str, bool]) -> None:
        """Write evidence; a value already set is written again (evidence re-asserts it).

        A step that did not apply when its variable first became true (its branch was not
        yet taken) completes when the evidence comes again after it applies.
        """
        before = self.done()
        if names:
            self.variables = self.sup.sync({**self.variables, **names}, names)
        self._stamp(index, before)

    def _stamp(self, index: int, before: set[str]) -> None:
        for step in self.done() - before:
            self.done_at.setdefault(step, index)

    def pick(self, index: int, label: str) -> None:
        """A wizard picked ``label``."""
        step = self.proc.steps.get(label)
        names: dict[str, bool] = {}
        if label in self.proc.branch_of:
            names[branch(self.proc.branch_of[label])] = True
        if step is not None and step.kind == "inform":
            names[said(label)] = True
        elif step is not None and step.kind == "ask":
            self.asked.append((label, index))
        self._set(index, names)

    def say(self, index: int, text: str) -> str | None:
        """The wizard typed free text: count it as the pick of the step it echoes, if one."""
        label = self.echo.match(self.proc.task, text) if self.echo is not None else None
        step = self.proc.steps.get(label or "")
        if label is None or step is None or step.kind == "query":
            return None
        self.pick(index, label)
        return label

    def utter(self, index: int, text: str) -> None:
        """The user spoke."""
        lowered = text.lower()
        names: dict[str, bool] = {}
        for label, asked_at in self.asked:
            names[said(label)] = True
            self.answered_by.setdefault(label, asked_at)
            self._check_ask(label, lowered, index)
        self.asked.clear()
        supplied = self.given[index]
        for label, step in self.proc.steps.items():
            if supplied.intersection(step.fields):
                names[said(label)] = True
                if label in self.proc.branch_of:
                    names[branch(self.proc.branch_of[label])] = True
        self._set(index, names)

    def _heard(self, fields: tuple[str, ...], lowered: str, index: int) -> bool:
        query = self.upcoming[index]
        return any(heard(query[f], lowered) for f in fields if f in query)

    def _check_ask(self, label: str, lowered: str, index: int) -> None:
        fields = self.proc.steps[label].fields
        if not fields:
            return
        if not any(f in self.upcoming[index] for f in fields):
            self.ask_checks.append((label, "field_not_in_query"))
        elif self._heard(fields, lowered, index):
            self.ask_checks.append((label, "value_in_answer"))
        else:
            self.ask_checks.append((label, "value_not_in_answer"))

    def query(self, index: int, constraints: Mapping[str, str]) -> GateCall:
        """A wizard called the API: mark the branch it starts, then ask the gate."""
        label = query_label(self.proc, constraints, self.done())
        if label in self.proc.branch_of:
            self._set(index, {branch(self.proc.branch_of[label]): True})
        decision = self.sup.gate(self.variables, self.proc.tool(label))
        if isinstance(decision, Veto):
            self.sup.block(decision)
            nxt = decision.next_step.id if decision.next_step else None
            call = GateCall(
                index,
                label,
                False,
                tuple(s.id for s in decision.open_steps),
                decision.message(),
                nxt,
            )
        else:
            call = GateCall(index, label, isinstance(decision, Allow))
        self.calls.append(call)
        self.pending_query = label
        return call

    def result(self, index: int, item: Mapping[str, object] | None) -> None:
        """The knowledge base answered the pending query.

        The outcome branch is marked first (the host maps the result to a variable before the
        runtime sees it), so the result's next-step note can follow the branch taken.
        """
        label = self.pending_query
        if label is None:
            return
        self.pending_query = None
        pair = self.proc.outcomes.get(label)
        if pair is not None:
            words = " ".join(str(v) for v in (item or {}).values() if isinstance(v, str))
            failed = item is None or bool(_NEGATIVE.search(words.lower()))
            self._set(index, {branch(pair[1] if failed else pair[0]): True})
        before = self.done()
        result: dict[str, JsonValue] = {"success": True, "found": item is not None}
        self.variables, note = self.sup.tool_result(
            self.variables, self.proc.tool(label), result, f"q{index}"
        )
        self._stamp(index, before)
        self.guided.append((index, self.current if note else None))
