"""Load an agent folder: ``agent.yaml`` (prompt, variables, flow) and ``tools.py``.

``tools.py`` holds the agent's setter validators and backend executors as plain functions,
registered by name.

There is one loading path. :func:`inspect_agent` reads the folder and returns the agent with
every problem found on the way, each at its config path; :func:`load_agent` (used by the
``Steward`` entry point, ``steward simulate``, ``steward rehearse`` and the test helpers)
raises them all at once; ``steward validate`` reports them and adds its cross-checks.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import yaml
from pydantic import BaseModel, ValidationError

from pipecat_steward.agent.config import AgentConfig
from pipecat_steward.agent.shape import shape_issues
from pipecat_steward.agent.yaml_keys import duplicate_keys
from pipecat_steward.core.expressions import parse_condition
from pipecat_steward.core.procedures import (
    MAIN,
    CompiledProcedures,
    Issue,
    IssueCode,
    ScopeSource,
    ToolLogic,
    compile_procedures,
    compile_tool_logic,
)
from pipecat_steward.core.slots import CompiledFlow, compile_flow
from pipecat_steward.core.transactions import Catalog
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.exceptions import ConfigError, StewardError
from pipecat_steward.runtime.dispatch import ToolFn

__all__ = [
    "Agent",
    "Engine",
    "Inspection",
    "agent_yaml",
    "as_agent",
    "inspect_agent",
    "load_agent",
    "load_yaml",
    "validated_list",
]

M = TypeVar("M", bound=BaseModel)

Engine = Literal["slots", "transactions"]
"""The two engines: the slot-filling flow, or multi-turn transactions (``intents``)."""


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

    @property
    def engine(self) -> Engine:
        """The engine the agent runs on, chosen once for every host.

        ``transactions`` when agent.yaml declares ``intents``, else ``slots`` (the slot-filling
        flow). ``pipecat_steward.runtime.engine.open_session`` builds the session from it.
        """
        return "transactions" if "intents" in self.raw else "slots"

    @cached_property
    def validators(self) -> frozenset[str]:
        """The functions the runtime calls directly: the setters' validators.

        A setter's validator runs inside the engine's step and must return its result (a
        mapping). Every other function of ``tools.py`` (executors, the model's tools, exit
        calls) is awaited: a coroutine function on the loop, a plain function in a thread.
        On the transactions engine the setters are the ``set_*`` functions; on the slot flow,
        the flow's setters.
        """
        if self.engine == "transactions":
            return frozenset(name for name in self.tools if name.startswith("set_"))
        return frozenset(name for name in self.flow.setters if name in self.tools)


@dataclass(frozen=True)
class Inspection:
    """What loading an agent folder found.

    Attributes:
        agent: The loaded agent, or None when any error was found.
        config: The sections of agent.yaml whose shape is valid (the others at their defaults).
        issues: Every error and warning, each with its config path.
        tool_names: The public functions of ``tools.py`` (None when the folder has none).
    """

    agent: Agent | None
    config: AgentConfig
    issues: tuple[Issue, ...]
    tool_names: frozenset[str] | None

    @property
    def errors(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == "error")


def load_yaml(path: Path) -> dict[str, Any]:
    """Read a YAML mapping, with errors that name the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(str(path), "expected a mapping at the top level")
    return cast(dict[str, Any], data)


def as_agent(agent: Agent | str | Path) -> Agent:
    """An agent given to a steward, a session or a player: itself, or loaded from its folder.

    Raises:
        TypeError: ``agent`` is neither an ``Agent`` nor a folder's path.
        ConfigError: The folder holds no valid agent (see ``load_agent``).
    """
    if isinstance(agent, Agent):
        return agent
    if isinstance(agent, (str, Path)):
        return load_agent(agent)
    raise TypeError(f"an agent is a loaded Agent or its folder's path, not {type(agent).__name__}")


def load_agent(folder: str | Path) -> Agent:
    """Load and validate the agent in ``folder``.

    Raises:
        ConfigError: When ``agent.yaml`` is missing or invalid; the message lists every
            error, one ``path: problem`` per line.
    """
    found = inspect_agent(folder)
    if found.agent is None:
        lines = "\n  ".join(f"{i.path}: {i.message}" for i in found.errors)
        raise ConfigError(str(Path(folder) / "agent.yaml"), f"invalid agent:\n  {lines}")
    return found.agent


_AGENT_FILES = ("agent.yaml", "tools.py")
_FOLDER = "an agent folder holds agent.yaml and tools.py"


def agent_yaml(folder: str | Path) -> Path:
    """The ``agent.yaml`` of the agent folder ``folder``.

    Raises:
        ConfigError: ``folder`` is a file, or holds no ``agent.yaml``.
    """
    root = Path(folder)
    if root.is_file():
        hint = f"name its folder, {root.parent}" if root.name in _AGENT_FILES else _FOLDER
        raise ConfigError(str(root), f"is a file, not an agent folder; {hint}")
    if not (root / "agent.yaml").is_file():
        raise ConfigError(str(root), f"no agent.yaml here; {_FOLDER}")
    return root / "agent.yaml"


def inspect_agent(folder: str | Path) -> Inspection:
    """Load the agent in ``folder`` and collect every problem instead of stopping at one.

    Raises:
        ConfigError: Only when ``agent.yaml`` is missing, unreadable or not a mapping.
    """
    root = Path(folder)
    config_path = agent_yaml(root)
    data = load_yaml(config_path)
    issues, config = shape_issues(data)
    text = config_path.read_text(encoding="utf-8")
    issues += [
        error(f"agent.yaml line {line}", f"key {key!r} is written twice; the first would be lost")
        for line, key in duplicate_keys(text)
    ]
    return _Build(root, data, config, issues).run()


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


def error(path: str, message: str, code: IssueCode = "invalid_config") -> Issue:
    """An error-severity issue."""
    return Issue("error", code, path, message)


class _Build:
    """One pass over the shape-valid sections, compiling each and noting its errors."""

    def __init__(
        self, root: Path, data: dict[str, Any], config: AgentConfig, issues: list[Issue]
    ) -> None:
        self.root, self.data, self.config, self.issues = root, data, config, issues

    def run(self) -> Inspection:
        flow = self._flow()
        tools = self._tools()
        procedures = self._procedures()
        self._llm_tools(tools)
        self._available_when()
        self._intents()
        agent = None
        if flow is not None and not any(i.severity == "error" for i in self.issues):
            agent = self._agent(flow, tools or {}, procedures)
        names = None if tools is None else frozenset(tools)
        return Inspection(agent, self.config, tuple(self.issues), names)

    def _agent(
        self, flow: CompiledFlow, tools: dict[str, ToolFn], procs: CompiledProcedures | None
    ) -> Agent:
        cfg = self.config
        prompt = procs.scopes[MAIN].prompt if procs else cfg.prompt
        logic = compile_tool_logic(procs, cfg.available_when) if procs else {}
        name = cfg.name or self.root.name
        return Agent(
            name,
            prompt,
            flow,
            tools,
            self.root,
            tuple(cfg.variables),
            procs,
            tuple(cfg.tools),
            logic,
            {k: v for k, v in self.data.items() if v is not None},
        )

    def _flow(self) -> CompiledFlow | None:
        raw = self.config.flow or {"slots": []}
        try:
            return compile_flow(raw, [v.name for v in self.config.variables])
        except ConfigError as exc:
            self.issues += _split("flow", exc)
            return None

    def _tools(self) -> dict[str, ToolFn] | None:
        path = self.root / "tools.py"
        if not path.is_file():
            return None
        try:
            return _load_tools(path)
        except (Exception, SystemExit) as exc:  # the author's module may raise anything
            self.issues.append(error("tools.py", f"cannot import: {type(exc).__name__}: {exc}"))
            return {}

    def _procedures(self) -> CompiledProcedures | None:
        sources = procedure_sources(self.config)
        if sources is None:
            return None
        try:
            procs = compile_procedures(sources)
        except ConfigError as exc:
            self.issues += _split("procedure", exc)
            return None
        self.issues += [i for i in procs.issues if i.severity == "error"]
        return procs

    def _llm_tools(self, tools: dict[str, ToolFn] | None) -> None:
        missing = [t for t in self.config.tools if t not in (tools or {})]
        if missing:
            where = "tools.py" if tools is not None else "tools.py (this folder has none)"
            self.issues.append(
                error("tools", f"not defined in {where}: {', '.join(missing)}", "unknown_tool")
            )

    def _available_when(self) -> None:
        for tool, text in self.config.available_when.items():
            try:
                parse_condition(text)
            except ConfigError as exc:
                self.issues.append(error(f"available_when.{tool}", exc.problem))

    def _intents(self) -> None:
        if self.config.intents is None:
            return
        try:
            Catalog.of([i.spec() for i in self.config.intents])
        except StewardError as exc:
            self.issues += _split("", exc)


def procedure_sources(config: AgentConfig) -> list[ScopeSource] | None:
    """The main scope and each topic, or None when the agent declares no procedure."""
    if config.procedure is None and not config.procedures and "{{" not in config.prompt:
        return None
    sources = [ScopeSource(MAIN, config.prompt, config.procedure)]
    for name, topic in config.procedures.items():
        path = f"procedures.{name}"
        sources.append(
            ScopeSource(name, topic.prompt, topic.procedure, f"{path}.procedure", f"{path}.prompt")
        )
    return sources


def _split(prefix: str, exc: StewardError) -> list[Issue]:
    """One issue per ``path: problem`` line of a multi-line config error."""
    lines = [ln.strip() for ln in str(exc).splitlines()]
    if len(lines) > 1 and lines[0].endswith(":"):
        lines = lines[1:]  # the "invalid flow config:" header
    out: list[Issue] = []
    for line in filter(None, lines):
        path, sep, problem = line.partition(": ")
        if not sep:
            path, problem = "", line
        full = f"{prefix}.{path}" if prefix and path else path
        out.append(error(full or prefix or "agent.yaml", problem))
    return out


def _load_tools(path: Path) -> dict[str, ToolFn]:
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
