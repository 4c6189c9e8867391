"""Load an agent folder: ``agent.yaml`` (prompt, variables, flow) and ``tools.py``.

``tools.py`` holds the agent's setter validators and backend executors as plain functions,
registered by name (DESIGN §11).
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml

from pipecat_steward.agent.dispatch import ToolFn
from pipecat_steward.core.slots import CompiledFlow, compile_flow
from pipecat_steward.exceptions import ConfigError

__all__ = ["Agent", "load_agent", "load_yaml"]


@dataclass(frozen=True)
class Agent:
    """A loaded agent: its name, prompt, compiled flow and tool functions."""

    name: str
    prompt: str
    flow: CompiledFlow
    tools: Mapping[str, ToolFn] = field(default_factory=lambda: {})
    folder: Path | None = None


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, with errors that name the file."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(str(path), "expected a mapping at the top level")
    return cast(dict[str, Any], data)


def load_agent(folder: str | Path) -> Agent:
    """Load and validate the agent in ``folder``.

    Raises:
        ConfigError: When ``agent.yaml`` is missing or invalid (errors carry config paths).
    """
    root = Path(folder)
    config_path = root / "agent.yaml"
    if not config_path.is_file():
        raise ConfigError(
            str(root), "no agent.yaml here; an agent folder holds agent.yaml and tools.py"
        )
    data = load_yaml(config_path)
    if "flow" not in data:
        raise ConfigError(f"{config_path}: flow", "missing; add the slots and tasks under `flow:`")
    flow = compile_flow(data["flow"])
    tools = _load_tools(root / "tools.py")
    return Agent(str(data.get("name", root.name)), str(data.get("prompt", "")), flow, tools, root)


def _load_tools(path: Path) -> dict[str, ToolFn]:
    if not path.is_file():
        return {}
    spec = importlib.util.spec_from_file_location(f"steward_agent_tools_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(str(path), "cannot import")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {
        name: fn
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if fn.__module__ == module.__name__ and not name.startswith("_")
    }
