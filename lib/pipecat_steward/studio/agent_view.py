"""What the page shows of the agent before any event: its steps, slots, variables and picture.

The picture is ``steward graph``'s drawing: SVG through Graphviz's ``dot`` when it is
installed (the page highlights the current step's node, ``step_<id>``), else the Mermaid text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.exceptions import StewardError

__all__ = ["AgentView", "describe", "picture"]


@dataclass(frozen=True)
class AgentView:
    """The agent as the page lists it."""

    name: str
    steps: list[dict[str, Any]]
    slots: list[dict[str, Any]]

    def json(self) -> dict[str, Any]:
        """The view as JSON for the page."""
        return {"name": self.name, "steps": self.steps, "slots": self.slots}


def describe(agent: Agent) -> AgentView:
    """The agent's checklist steps and its slots and variables, in authored order."""
    procs = agent.procedures
    steps = [
        {"id": s.id, "title": s.title or s.id, "kind": s.kind, "irreversible": s.irreversible}
        for s in (procs.steps.values() if procs is not None else ())
    ]
    slots: list[dict[str, Any]] = [
        {"name": slot.config.name, "kind": "slot", "sensitive": False} for slot in agent.flow.slots
    ]
    slots += [
        {
            "name": v.name,
            "kind": "variable",
            "sensitive": v.sensitive,
            "linked": v.linked,
            "description": v.description,
        }
        for v in agent.variables
    ]
    name = str(agent.raw.get("name") or (agent.folder.name if agent.folder else "agent"))
    return AgentView(name, steps, slots)


def picture(agent_dir: Path) -> tuple[str, str]:
    """``(media type, body)``: the agent as SVG, or as Mermaid text without Graphviz."""
    from pipecat_steward.cli.graph import render

    try:
        return "image/svg+xml", render(agent_dir, "svg").decode()
    except StewardError:
        return "text/plain", render(agent_dir, "mermaid").decode()


def load(agent_dir: Path) -> Agent:
    """Load the agent folder (errors name the path and the fix)."""
    return load_agent(agent_dir)
