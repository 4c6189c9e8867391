"""Compiling any STAR task flowchart into a procedure, generically from its JSON.

The flowchart's ``graph`` maps a wizard action label to the label that follows it. The rules:

- Labels shared by every task (``hello``, ``anything_else``, ``out_of_scope``, ``custom``) are
  handled once, here: they are never steps.
- A *branch label* is a graph key nothing leads to (other than the entry ``hello``): ``yes`` /
  ``no``, the query outcomes ``available`` / ``unavailable`` and ``query_success`` /
  ``query_failure``, or an alternative path such as ``info_missing``.
- ``query`` and every ``query_<kind>`` (not an outcome) is the API call: an irreversible tool
  step named ``<task>`` or ``<task>_<kind>``, completed by the call's success.
- Every other label in the graph is an ask or inform step (ask when the label says ``ask`` or
  the template ends with ``?``). It completes through the variable ``said_<label>`` that the
  replay's evidence rules set. Its prerequisites are the steps the graph puts right before it.
- A step is optional when the API schema lists its required inputs and the step collects
  only inputs outside that list (``CustomerRequest``, ``Message``): it stays a step with its
  guidance, but nothing requires it; what it required passes through to its successors, and
  it stops applying once the query it feeds has run.
- An outcome pair hangs off a query with no successor of its own (pairs and such queries are
  matched in flowchart order). Any other branch label hangs off the one terminal question of
  the graph when there is exactly one. An edge from a branch label back onto the main path
  (reachable from ``hello``) is a loop back and adds no prerequisite; so is any edge from a
  branch's step onto the main path, and any edge back to a step met earlier on its path.
- A flowchart whose graph places no query still gets its query steps (from ``replies``, else
  ``query``), with no prerequisites.
- The ask and inform steps only a branch reaches apply while ``branch_<label> == true``. Where
  such a chain, hanging off nothing, joins the main path, it is an alternative to the main-path
  steps it replaces: the step right before the join, and before it each step whose template
  the branch label's own text names (by a content word), back to the first it does not name.
  Either path satisfies what follows the join: the replaced steps apply until every step of
  the chain is done, the chain's steps (while its branch is taken) until every replaced step
  is done. With neither path complete, both paths' open steps are named. A query never gets a condition: a gate whose own step does not apply binds
  nothing, so a booking reached only through ``yes`` would otherwise run unchecked whenever
  the branch was not marked.

Labels the graph does not place are free replies: no order binds them. Every label is read as
its step id (:func:`~.star_data.step_id`), in the graph and in the replies alike. Every compiled
procedure is checked with the same validation ``steward validate`` runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pipecat_steward.core.procedures import (
    CompiledProcedures,
    Issue,
    ScopeSource,
    compile_procedures,
    done_name,
)
from pipecat_steward.core.procedures.validate import validate_procedures
from pipecat_steward.core.words import word_set
from pipecat_steward.replay.star_data import flowchart_graph, flowchart_replies

__all__ = ["SHARED_LABELS", "StarProcedure", "StarStep", "compile_task"]

SHARED_LABELS = frozenset({"hello", "anything_else", "out_of_scope", "custom"})
OUTCOME_PAIRS = (("available", "unavailable"), ("query_success", "query_failure"))
_OUTCOMES = frozenset(label for pair in OUTCOME_PAIRS for label in pair)
_ENTRY = "hello"
_FUNCTION_WORDS = word_set(
    "the and are was were has have had can could would will shall should may might must you "
    "your yours our for with from that this these those what which who whom when where why "
    "how not any all some none there here please thank thanks sorry also just only than "
    "then into about"
)
StepKind = Literal["ask", "inform", "query"]


@dataclass(frozen=True, slots=True)
class StarStep:
    """One compiled flowchart label."""

    label: str
    kind: StepKind
    requires: tuple[str, ...]
    tool: str | None = None
    applies: str | None = None
    fields: tuple[str, ...] = ()
    optional: bool = False
    text: str = ""


@dataclass(frozen=True, slots=True)
class StarProcedure:
    """A task's compiled procedure and what the replay needs to drive it.

    Attributes:
        task: The task name (the flowchart's file stem).
        steps: Label → step, in document order.
        config: The ``procedure:`` mapping the runtime compiled.
        procs: The compiled procedures.
        issues: What publish validation reported (errors and warnings).
        outcomes: Query label → (success branch, failure branch).
        branch_of: Each label a non-outcome branch reaches → that branch label (acting on
            any of them shows the branch was taken).
        variables: The replay's variables with their starting values.
    """

    task: str
    steps: Mapping[str, StarStep]
    config: Mapping[str, Any]
    procs: CompiledProcedures
    issues: tuple[Issue, ...]
    outcomes: Mapping[str, tuple[str, str]]
    branch_of: Mapping[str, str]
    variables: Mapping[str, bool]

    @property
    def queries(self) -> tuple[str, ...]:
        """The query labels in document order."""
        return tuple(s.label for s in self.steps.values() if s.kind == "query")

    def tool(self, query_label: str) -> str:
        """The tool name of a query label."""
        tool = self.steps[query_label].tool
        assert tool is not None
        return tool


def said(label: str) -> str:
    """The variable an ask or inform step completes on."""
    return f"said_{label}"


def branch(label: str) -> str:
    """The variable that says a branch was taken."""
    return f"branch_{label}"


def _is_query(label: str) -> bool:
    return (label == "query" or label.startswith("query_")) and label not in _OUTCOMES


def _reach(graph: Mapping[str, str], start: str, stop: set[str]) -> list[str]:
    out: list[str] = []
    node: str | None = start
    while node is not None and node not in stop and node not in out:
        out.append(node)
        node = graph.get(node)
    return out


@dataclass
class _Graph:
    task: str
    replies: Mapping[str, str]
    graph: Mapping[str, str]

    def __post_init__(self) -> None:
        self.nodes = list(dict.fromkeys([x for kv in self.graph.items() for x in kv]))
        targets = set(self.graph.values())
        self.branches = [
            k for k in self.graph if k not in targets and k != _ENTRY and k not in SHARED_LABELS
        ]
        entry = _ENTRY if _ENTRY in self.graph else next(iter(self.graph), _ENTRY)
        self.main = _reach(self.graph, entry, set())
        self.chains = {b: _reach(self.graph, self.graph[b], set(self.main)) for b in self.branches}
        self.steps = [
            n
            for n in [*self.main, *(x for c in self.chains.values() for x in c)]
            if n not in SHARED_LABELS and n not in self.branches
        ]
        self.steps = list(dict.fromkeys(self.steps))
        if not any(_is_query(n) for n in self.steps):  # the API call exists even if unplaced
            self.steps += [r for r in self.replies if _is_query(r)] or ["query"]
        self.outcomes = self._pair_outcomes()

    def _pair_outcomes(self) -> dict[str, tuple[str, str]]:
        open_queries = [q for q in self.steps if _is_query(q) and q not in self.graph]
        pairs = [p for p in OUTCOME_PAIRS if p[0] in self.graph or p[1] in self.graph]
        pairs.sort(key=lambda p: min(list(self.graph).index(x) for x in p if x in self.graph))
        queries = open_queries or [q for q in self.steps if _is_query(q)]
        out: dict[str, tuple[str, str]] = {}
        for i, pair in enumerate(pairs):
            if queries:
                out.setdefault(queries[min(i, len(queries) - 1)], pair)
        return out

    def attach(self, label: str) -> str | None:
        """The step a branch label hangs off."""
        for query, pair in self.outcomes.items():
            if label in pair:
                return query
        questions = [
            n
            for n in self.steps
            if n not in self.graph
            and not _is_query(n)
            and self.replies.get(n, "").rstrip().endswith("?")
        ]
        if len(questions) > 1:  # several: the one a positive outcome leads to
            questions = [q for q in questions if self._on_positive(q)]
        return questions[0] if len(questions) == 1 else None

    def _on_positive(self, label: str) -> bool:
        return any(label in self.chains.get(p[0], ()) for p in OUTCOME_PAIRS)

    def next_query(self, label: str) -> str | None:
        """The first query the graph reaches after ``label``."""
        node = self.graph.get(label)
        seen: set[str] = set()
        while node is not None and node not in seen and not _is_query(node):
            seen.add(node)
            node = self.graph.get(node)
        return node

    def kind(self, label: str) -> StepKind:
        if _is_query(label):
            return "query"
        text = self.replies.get(label, "").rstrip()
        asks = "ask" in label.split("_") or text.endswith("?")
        return "ask" if asks else "inform"

    def requires(self, label: str) -> tuple[str, ...]:
        reqs: list[str] = []
        for source, target in self.graph.items():
            if target != label:
                continue
            if source in self.branches:
                parent = self.attach(source)
                if label not in self.main and parent is not None:
                    reqs.append(parent)
            elif source not in SHARED_LABELS and not self._loop(source, label):
                reqs.append(source)
        return tuple(dict.fromkeys(reqs))

    def _loop(self, source: str, target: str) -> bool:
        """Whether an edge goes back (a loop adds no prerequisite).

        Back means to an earlier step of its own path, or from a branch onto the main path at
        or before the step the branch hangs off (a retry, not a join).
        """
        if target in self.main and source in self.main:
            return self.main.index(target) <= self.main.index(source)
        if target in self.main:  # a branch's step enters the main path: a join or a retry
            name = next((b for b, c in self.chains.items() if source in c), None)
            parent = self.attach(name) if name is not None else None
            if parent is None:
                return False  # an alternative path joining (``info_missing`` … → ``query``)
            return parent not in self.main or self.main.index(target) <= self.main.index(parent)
        chain = next((c for c in self.chains.values() if source in c and target in c), None)
        return chain is not None and chain.index(target) <= chain.index(source)

    def applies(self, label: str) -> str | None:
        if _is_query(label):
            return None  # a gate under a condition would stop binding when the branch is not taken
        for name, chain in self.chains.items():
            if label in chain:
                main = self.replaced(name)
                return f"{branch(name)} == true" + (f" and {_not_all(main)}" if main else "")
        joins = [c for b, c in self.chains.items() if label in self.replaced(b)]
        return " and ".join(_not_all(c) for c in joins) or None

    def replaced(self, name: str) -> list[str]:
        """The main-path steps an alternative chain replaces where it joins the main path.

        The flowchart does not say where the alternative leaves the main path, so: the step
        right before the join, and before it each further step whose template a content word
        of the branch label's own text names ("Can't remember account number or PIN" names
        the account-number and PIN asks), back to the first one not named.
        """
        chain = self.chains.get(name, [])
        join = self.graph.get(chain[-1]) if chain else None
        if join not in self.main or name in _OUTCOMES or self.attach(name) is not None:
            return []
        before = [n for n in self.main[: self.main.index(join)] if n not in SHARED_LABELS]
        named = self._content(self.replies.get(name, ""))
        out = before[-1:]
        for step in reversed(before[:-1]):
            if not named & self._content(self.replies.get(step, "")):
                break
            out.append(step)
        return out

    def _content(self, text: str) -> set[str]:
        """A text's content words: not function words, nor in a quarter of the templates."""
        found = set(re.findall(r"[a-z]{3,}", text.lower())) - _FUNCTION_WORDS
        return {w for w in found if self._template_share(w) <= 0.25}

    def _template_share(self, word: str) -> float:
        texts = [set(re.findall(r"[a-z]{3,}", t.lower())) for t in self.replies.values()]
        return sum(word in t for t in texts) / max(len(texts), 1)


def _not_all(steps: list[str]) -> str:
    """The condition that not every one of the steps is done."""
    return "(" + " or ".join(f"{done_name(x)} != true" for x in steps) + ")"


def _tool(task: str, label: str) -> str:
    return task if label == "query" else f"{task}_{label.removeprefix('query_')}"


def compile_task(
    task: str,
    flowchart: Mapping[str, Any],
    api: Mapping[str, Any] | None = None,
    fields: Mapping[str, tuple[str, ...]] | None = None,
) -> StarProcedure:
    """Compile one task's flowchart JSON (``replies`` and ``graph``) into a procedure.

    Args:
        task: The task name.
        flowchart: The flowchart JSON.
        api: The task's API schema; its ``required`` inputs decide which steps are optional.
        fields: Step label → the API fields it collects (see :mod:`.star_bind`).
    """
    replies = flowchart_replies(flowchart)
    g = _Graph(task, replies, flowchart_graph(flowchart))
    required = {str(r) for r in (api or {}).get("required", [])}
    collects = fields or {}
    optional = {label for label in g.steps if _optional(collects.get(label, ()), required)}
    steps = {
        label: StarStep(
            label,
            g.kind(label),
            _resolve(g, label, optional),
            _tool(task, label) if g.kind(label) == "query" else None,
            _applies(g, label, optional),
            tuple(collects.get(label, ())),
            label in optional,
            replies.get(label, ""),
        )
        for label in g.steps
    }
    config = {"steps": [_settings(s, replies.get(s.label, "")) for s in steps.values()]}
    source = ScopeSource("main", "", config)
    report = validate_procedures([source], tools=[s.tool for s in steps.values() if s.tool])
    entry = {x: b for b, c in g.chains.items() if b not in _OUTCOMES for x in c}
    names = [said(s.label) for s in steps.values() if s.kind != "query"]
    names += [branch(b) for b in g.branches]
    return StarProcedure(
        task,
        steps,
        config,
        compile_procedures([source]),
        report.issues,
        g.outcomes,
        entry,
        dict.fromkeys(names, False),
    )


def _applies(g: _Graph, label: str, optional: set[str]) -> str | None:
    """The step's ``applies_when``: its branch condition, and for an optional step, the query.

    An optional step stops applying once the query it feeds has run, so guidance never points
    back to it after the call.
    """
    conditions = [c for c in (g.applies(label),) if c]
    if label in optional and (fed := g.next_query(label)) is not None:
        conditions.append(f"{done_name(fed)} != true")
    return " and ".join(conditions) or None


def _optional(collects: tuple[str, ...], required: set[str]) -> bool:
    """Whether a step is optional: the API names required inputs and it collects none of them.

    A step collecting nothing known stays required.
    """
    return bool(required) and bool(collects) and not (set(collects) & required)


def _resolve(g: _Graph, label: str, optional: set[str]) -> tuple[str, ...]:
    """The step's prerequisites with optional steps replaced by their own prerequisites."""
    out: list[str] = []
    todo = list(g.requires(label))
    seen: set[str] = set()
    while todo:
        step = todo.pop(0)
        if step in seen:
            continue
        seen.add(step)
        if step in optional:
            todo.extend(g.requires(step))
        else:
            out.append(step)
    return tuple(out)


def _settings(step: StarStep, reply: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": step.label,
        "guidance": reply or step.label,
        "requires": list(step.requires),
    }
    if step.kind == "query":
        entry["complete_when"] = {"kind": "tool", "tool": step.tool}
        entry["irreversible"] = True
        # An API call the flowchart allows again (a check before a booking, a retry after a
        # failure): its prerequisites gate every call, but a repeat is not a double charge.
        entry["repeatable"] = True
    else:
        entry["complete_when"] = {"kind": "variable", "expr": f"{said(step.label)} == true"}
    if step.applies:
        entry["applies_when"] = {"kind": "code", "expr": step.applies}
    return entry
