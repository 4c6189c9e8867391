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
from typing import Any, TypeVar, cast

import yaml
from pydantic import BaseModel, ValidationError

from pipecat_steward.agent.dispatch import ToolFn
from pipecat_steward.core.procedures import (
    MAIN,
    CompiledProcedures,
    ScopeSource,
    ToolLogic,
    compile_procedures,
    compile_tool_logic,
)
from pipecat_steward.core.slots import CompiledFlow, compile_flow
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.exceptions import ConfigError

__all__ = ["Agent", "load_agent", "load_yaml", "validated_list"]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Agent:
    """A loaded agent.

    Attributes:
        name: The agent's name.
        prompt: The prompt the model sees (procedure markers stripped, references expanded).
        flow: The compiled slot-filling flow (empty when the agent declares none).
        tools: Every function of ``tools.py``: validators, executors and the model's tools.
        folder: Where it was loaded from.
        variables: Declared blackboard variables.
        procedures: Compiled procedures (None when the agent has none).
        llm_tools: Tools of ``tools.py`` the model may call directly (``tools:`` in agent.yaml).
        tool_logic: Per tool, its procedure gate and the author's ``available_when``.
        raw: The agent.yaml mapping, for the parts other layers read (``aux``, ``intents``).
    """

    name: str
    prompt: str
    flow: CompiledFlow
    tools: Mapping[str, ToolFn] = field(default_factory=lambda: {})
    folder: Path | None = None
    variables: tuple[VariableSpec, ...] = ()
    procedures: CompiledProcedures | None = None
    llm_tools: tuple[str, ...] = ()
    tool_logic: Mapping[str, ToolLogic] = field(default_factory=lambda: {})
    raw: Mapping[str, Any] = field(default_factory=lambda: {})


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
    variables = _variables(data.get("variables"))
    flow = compile_flow(data.get("flow") or {"slots": []}, [v.name for v in variables])
    tools = _load_tools(root / "tools.py")
    procedures = _procedures(data)
    prompt = procedures.scopes[MAIN].prompt if procedures else str(data.get("prompt", ""))
    llm_tools = tuple(str(t) for t in data.get("tools") or ())
    missing = [t for t in llm_tools if t not in tools]
    if missing:
        raise ConfigError("tools", f"not defined in tools.py: {', '.join(missing)}")
    logic = compile_tool_logic(procedures, data.get("available_when") or {}) if procedures else {}
    return Agent(
        str(data.get("name", root.name)),
        prompt,
        flow,
        tools,
        root,
        variables,
        procedures,
        llm_tools,
        logic,
        data,
    )


def validated_list(model: type[M], raw: object, path: str) -> tuple[M, ...]:
    """Validate a list of config entries; the first error names its path (``intents[2].name``)."""
    if not isinstance(raw, list):
        raise ConfigError(path, f"must be a list of {model.__name__} entries")
    out: list[M] = []
    for i, entry in enumerate(cast(list[object], raw)):
        try:
            out.append(model.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{path}[{i}]{'.' + where if where else ''}", first["msg"]) from None
    return tuple(out)


def _variables(raw: object) -> tuple[VariableSpec, ...]:
    return () if raw is None else validated_list(VariableSpec, raw, "variables")


def _procedures(data: Mapping[str, Any]) -> CompiledProcedures | None:
    """Compile the main prompt's and each topic's procedures (None when there are none)."""
    prompt = str(data.get("prompt", ""))
    topics = cast(Mapping[str, Any], data.get("procedures") or {})
    if not data.get("procedure") and not topics and "{{" not in prompt:
        return None
    sources = [ScopeSource(MAIN, prompt, data.get("procedure"))]
    for name, body in topics.items():
        scope = cast(Mapping[str, Any], body)
        path = f"procedures.{name}"
        sources.append(
            ScopeSource(
                str(name),
                str(scope.get("prompt", "")),
                scope.get("procedure"),
                f"{path}.procedure",
                f"{path}.prompt",
            )
        )
    return compile_procedures(sources, strict=True)


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
