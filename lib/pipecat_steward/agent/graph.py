"""A picture of an agent: its slots, tasks, readback groups and procedure steps as a graph.

``agent_graph`` reads a loaded agent into a small neutral graph; ``to_mermaid`` and ``to_dot``
render it (Mermaid for Markdown on GitHub, DOT for Graphviz's ``dot`` to make SVG or PNG).

What is drawn:

- each slot, with its sources (``user`` via which setter, ``task``, ``event``, ``announce``),
  its condition, whether it is read back and whether it is optional; ``requires`` edges;
- each task, with its tool and condition; edges from its inputs and requirements, and to the
  slots its outputs fill; tasks that read their inputs back as a group get a readback node;
- each intent (a multi-turn transaction): what it needs, its confirmation question, the tool
  that checks it first and the executor that runs after the caller's yes;
- each procedure checklist, its steps (how each completes, ``applies_when``, irreversible) and
  their ``requires`` edges; each gated tool, the steps it waits for and the step it completes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.procedures.steps import ProcedureStep
from pipecat_steward.core.slots.compiled import CompiledSlot, CompiledTask
from pipecat_steward.core.slots.sources import UserSource, spelling

__all__ = ["Edge", "Graph", "Node", "agent_graph", "to_dot", "to_mermaid"]

Kind = Literal["slot", "auto_slot", "task", "readback", "intent", "step", "gate"]
EdgeStyle = Literal["solid", "dashed", "dotted"]


@dataclass(frozen=True)
class Node:
    """One box: ``lines[0]`` is its title, the rest are details."""

    id: str
    kind: Kind
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Edge:
    """An arrow from ``src`` to ``dst``."""

    src: str
    dst: str
    label: str = ""
    style: EdgeStyle = "solid"


@dataclass
class Graph:
    """Nodes grouped in titled clusters (``""``: outside any cluster), and edges between them."""

    title: str
    clusters: dict[str, list[Node]] = field(default_factory=lambda: {})
    edges: list[Edge] = field(default_factory=lambda: [])

    def add(self, cluster: str, node: Node) -> None:
        """Add ``node`` to ``cluster`` unless a node of that id is drawn already."""
        if all(n.id != node.id for nodes in self.clusters.values() for n in nodes):
            self.clusters.setdefault(cluster, []).append(node)


def agent_graph(agent: Agent) -> Graph:
    """The graph of ``agent``: slots, tasks, readback groups and procedure steps."""
    graph = Graph(agent.name)
    for slot in agent.flow.slots:
        _slot(graph, slot)
    for task in agent.flow.tasks:
        _task(graph, task)
    for pair in agent.flow.config.ask_together:
        graph.edges += [
            Edge(_id("slot", a), _id("slot", b), "asked together", "dotted")
            for a, b in zip(pair, pair[1:], strict=False)
        ]
    for intent in agent.raw.get("intents") or []:
        if isinstance(intent, dict) and intent.get("name"):
            _intent(graph, intent)
    if agent.procedures is not None:
        _procedures(graph, agent)
    return graph


def _id(kind: str, name: str) -> str:
    return f"{kind}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"


def _slot(graph: Graph, slot: CompiledSlot) -> None:
    config = slot.config
    sources = [
        f"user via {config.setter}" if isinstance(s, UserSource) and config.setter else spelling(s)
        for s in slot.sources
    ]
    lines = [slot.name, "source: " + ", ".join(sources)]
    lines += [f"if {slot.condition}"] if slot.condition is not None else []
    lines += ["read back"] if config.requires_readback else []
    lines += ["optional"] if not config.required else []
    graph.add(
        "", Node(_id("slot", slot.name), "slot" if slot.is_user else "auto_slot", tuple(lines))
    )
    graph.edges += [
        Edge(_id("slot", r), _id("slot", slot.name), "requires", "dashed") for r in config.requires
    ]


def _task(graph: Graph, task: CompiledTask) -> None:
    config, node = task.config, _id("task", task.name)
    lines = [task.name, f"tool: {config.tool}"]
    lines += [f"if {task.condition}"] if task.condition is not None else []
    lines += ["ends the call"] if config.terminal else []
    graph.add("", Node(node, "task", tuple(lines)))
    target = node
    if config.readback_inputs:
        target = _id("readback", task.name)
        graph.add("", Node(target, "readback", ("read back together", f"before {task.name}")))
        graph.edges.append(Edge(target, node, "confirmed"))
    graph.edges += [Edge(_id("slot", s), target, "input") for s in config.inputs]
    graph.edges += [Edge(_id("slot", s), node, "requires", "dashed") for s in config.requires]
    graph.edges += [
        Edge(node, _id("slot", slot), "fills" if key == slot else f"fills (from {key})")
        for key, slot in config.outputs.items()
    ]


def _intent(graph: Graph, intent: dict[str, object]) -> None:
    """A multi-turn transaction: what it needs, its check, its confirmation and its executor."""
    name, node = str(intent["name"]), _id("intent", str(intent["name"]))
    required = intent.get("required") or []
    lines = [f"intent: {name}", str(intent.get("description") or "")]
    lines += [f"needs: {', '.join(map(str, required))}"] if isinstance(required, list) else []
    if intent.get("confirmation"):
        lines.append(f"asks: {intent['confirmation']}")
    graph.add("Intents", Node(node, "intent", tuple(line for line in lines if line)))
    for key, label in (("pre_validation", "checks first"), ("executor", "runs after a yes")):
        tool = intent.get(key)
        if tool:
            tool_node = _id("tool", str(tool))
            graph.add("Intents", Node(tool_node, "task", (f"tool: {tool}",)))
            graph.edges.append(Edge(node, tool_node, label))


def _procedures(graph: Graph, agent: Agent) -> None:
    procs = agent.procedures
    assert procs is not None
    for key, checklist in procs.checklists.items():
        title = f"Procedure: {checklist.title or key}"
        for step in procs.checklist_steps(key):
            graph.add(title, Node(_id("step", step.id), "step", _step_lines(step)))
            graph.edges += [Edge(_id("step", r), _id("step", step.id)) for r in step.requires]
    for tool, gate in procs.gates.items():
        node = _id("gate", tool)
        graph.add(
            "Gated tools",
            Node(node, "gate", (f"gate: {tool}", "blocked until its steps' requirements are done")),
        )
        for step_id in gate.steps:
            step = procs.steps[step_id]
            graph.edges += [
                Edge(_id("step", r), node, "must be done", "dashed") for r in step.requires
            ]
            graph.edges.append(Edge(node, _id("step", step_id), "completes"))


def _step_lines(step: ProcedureStep) -> tuple[str, ...]:
    how = {
        "variable": f"done when {step.expr}",
        "tool": f"done when {step.tool or step.component} returns",
        "judge": "done when the monitor judges it",
    }.get(str(step.kind), str(step.kind))
    lines = [f"{step.id}: {step.title}" if step.title and step.title != step.id else step.id, how]
    lines += [f"applies when {e}" for e in step.applies]
    lines += [f"applies when (judged) {step.applies_llm}"] if step.applies_llm else []
    lines += [f"irreversible (fail {step.fail_mode})"] if step.irreversible else []
    return tuple(lines)


# --- How each kind of node looks ------------------------------------------------------------


@dataclass(frozen=True)
class _Look:
    """How one kind of node is drawn: its Mermaid brackets and its DOT shape, style and fill."""

    mermaid: tuple[str, str]
    dot_shape: str
    dot_style: str
    fill: str


_LOOK: dict[Kind, _Look] = {
    "slot": _Look(('["', '"]'), "box", "rounded,filled", "#e8f1fd"),
    "auto_slot": _Look(('[/"', '"/]'), "parallelogram", "filled", "#eef7ea"),
    "task": _Look(('[["', '"]]'), "box3d", "filled", "#fdf1e3"),
    "readback": _Look(('(["', '"])'), "oval", "filled", "#fdf9e0"),
    "intent": _Look(('>"', '"]'), "cds", "filled", "#e6f6f6"),
    "step": _Look(('("', '")'), "box", "rounded,filled", "#f1ecfb"),
    "gate": _Look(('{{"', '"}}'), "hexagon", "filled", "#fbe6e6"),
}


# --- Mermaid ---------------------------------------------------------------------------------

_MERMAID_ARROW = {"solid": "-->", "dashed": "-.->", "dotted": "-.-"}


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def to_mermaid(graph: Graph) -> str:
    """The graph as a Mermaid flowchart (paste into Markdown inside a ``mermaid`` fence)."""
    lines = ["flowchart TB"]
    for number, (title, nodes) in enumerate(graph.clusters.items()):
        indent = "    " if title else "  "
        if title:
            lines.append(f'  subgraph c{number}["{_mermaid_text(title)}"]')
        for node in nodes:
            left, right = _LOOK[node.kind].mermaid
            label = "<br/>".join(_mermaid_text(line) for line in node.lines)
            lines.append(f"{indent}{node.id}{left}{label}{right}")
        if title:
            lines.append("  end")
    for edge in _known(graph):
        arrow = _MERMAID_ARROW[edge.style]
        label = f'|"{_mermaid_text(edge.label)}"|' if edge.label else ""
        lines.append(f"  {edge.src} {arrow}{label} {edge.dst}")
    return "\n".join(lines) + "\n"


# --- DOT -------------------------------------------------------------------------------------


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Graph) -> str:
    """The graph in Graphviz's DOT language (``dot -Tsvg`` draws it)."""
    lines = [
        "digraph agent {",
        "  rankdir=TB;",
        f'  label="{_dot_text(graph.title)}"; labelloc=t; fontname="Helvetica";',
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    for number, (title, nodes) in enumerate(graph.clusters.items()):
        lines.append(
            f'  subgraph cluster_{number} {{ label="{_dot_text(title)}"; style=rounded;'
            if title
            else "  {"
        )
        for node in nodes:
            label = "\\n".join(_dot_text(line) for line in node.lines)
            look = _LOOK[node.kind]
            lines.append(
                f'    {node.id} [label="{label}", shape={look.dot_shape}, '
                f'style="{look.dot_style}", fillcolor="{look.fill}"];'
            )
        lines.append("  }")
    for edge in _known(graph):
        attrs = [f'label="{_dot_text(edge.label)}"'] if edge.label else []
        attrs += [f"style={edge.style}"] if edge.style != "solid" else []
        attrs += ["dir=none"] if edge.style == "dotted" else []
        lines.append(
            f"  {edge.src} -> {edge.dst}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _known(graph: Graph) -> Iterable[Edge]:
    """Edges between drawn nodes only (a reference to an undeclared name draws nothing)."""
    ids = {n.id for nodes in graph.clusters.values() for n in nodes}
    return (e for e in graph.edges if e.src in ids and e.dst in ids)
