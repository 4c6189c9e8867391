"""``steward validate AGENT_DIR``: publish validation and preflight of an agent folder.

Reads ``AGENT_DIR/agent.yaml``::

    prompt: ...                 # the main prompt, with inline {{#step}} blocks
    procedure: {...}            # the main scope's procedure (sparse sidecar, monitor, groups)
    procedures:                 # more scopes (topics), each {prompt, procedure}
      appointments: {prompt: ..., procedure: {...}}
    variables: [...]            # variable specs
    tools: [name, ...]          # the agent's tools (default: public functions of tools.py)
    flow: {...}                 # the slot-filling flow
    aux: {...}                  # logic_slm stack/overlay, resolved without connecting

Prints every error and warning with its config path; exits 1 when there are errors, 2 when
the folder cannot be read, 0 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import ValidationError

from pipecat_steward.cli._slm_agent import agent_stage
from pipecat_steward.core.procedures import Issue, IssueCode, ScopeSource, Severity
from pipecat_steward.core.procedures.validate import validate_procedures
from pipecat_steward.core.slots import check_flow, load_flow_config
from pipecat_steward.core.variables import VariableSpec
from pipecat_steward.exceptions import ConfigError, SLMError

__all__ = ["add_parser", "run", "validate_agent"]


def add_parser(sub: Any) -> None:
    """Register ``steward validate``."""
    parser = sub.add_parser("validate", help="publish validation and preflight of an agent")
    parser.add_argument("agent_dir", type=Path, metavar="AGENT_DIR", help="agent folder")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print every issue; 1 on errors, 2 when the folder cannot be read."""
    try:
        issues = validate_agent(args.agent_dir)
    except ConfigError as err:
        print(f"steward validate: {err}", file=sys.stderr)
        return 2
    for issue in issues:
        print(issue)
    errors = sum(i.severity is Severity.ERROR for i in issues)
    print(f"{args.agent_dir}: {errors} error(s), {len(issues) - errors} warning(s)")
    return 1 if errors else 0


def validate_agent(agent_dir: Path) -> list[Issue]:
    """Validate an agent folder and return every issue (errors and warnings).

    Raises:
        ConfigError: ``agent.yaml`` is missing or is not a YAML mapping.
    """
    data = _load(agent_dir / "agent.yaml")
    issues: list[Issue] = []
    specs = _variables(data.get("variables"), issues)
    flow_writes = _flow(data.get("flow"), specs, issues)
    sources = _sources(data, issues)
    report = validate_procedures(
        sources,
        variables=specs,
        tools=_tools(data.get("tools"), agent_dir / "tools.py", issues),
        logic_slm_resolvable=_resolvable(agent_dir),
        writes=flow_writes,
    )
    issues += _idempotency(data.get("intents"), agent_dir / "tools.py")
    return issues + list(report.issues)


def _idempotency(raw: object, tools_py: Path) -> list[Issue]:
    """Warn about intents whose executor may act twice when replayed after a crash."""
    intents = cast(list[object], raw) if isinstance(raw, list) else []
    marked = _marked_idempotent(tools_py)
    issues: list[Issue] = []
    for i, entry in enumerate(intents):
        if not isinstance(entry, dict):
            continue
        intent = cast(dict[str, Any], entry)
        executor = str(intent.get("executor", ""))
        if intent.get("read_only") is True or not executor or executor in marked:
            continue
        message = (
            f"executor {executor!r} is called again with the same idempotency_key when a crash "
            "lands between its call and the checkpoint of its result; make it return the "
            "recorded outcome for a key it already acted on and mark it @idempotent "
            "(from pipecat_steward.agent.transactions), or set read_only: true on an intent "
            "that changes nothing"
        )
        issues.append(
            Issue(
                Severity.WARNING,
                IssueCode.EXECUTOR_NOT_IDEMPOTENT,
                f"intents[{i}].executor",
                message,
            )
        )
    return issues


def _marked_idempotent(tools_py: Path) -> set[str]:
    """Functions of tools.py decorated ``@idempotent`` (read from the source, not imported)."""
    if not tools_py.is_file():
        return set()
    tree = ast.parse(tools_py.read_text(encoding="utf-8"), str(tools_py))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(_decorator_name(d) == "idempotent" for d in node.decorator_list)
    }


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(str(path), "not found; an agent folder needs agent.yaml")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(str(path), f"not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "expected a mapping at the top level")
    return cast(dict[str, Any], data)


def _invalid(path: str, message: str) -> Issue:
    return Issue(Severity.ERROR, IssueCode.INVALID_CONFIG, path, message)


def _variables(raw: object, issues: list[Issue]) -> list[VariableSpec]:
    specs: list[VariableSpec] = []
    for i, entry in enumerate(cast(list[object], raw) if isinstance(raw, list) else []):
        try:
            specs.append(VariableSpec.model_validate(entry))
        except ValidationError as exc:
            for e in exc.errors():
                where = ".".join(str(p) for p in e["loc"])
                issues.append(_invalid(f"variables[{i}]{'.' + where if where else ''}", e["msg"]))
    if raw is not None and not isinstance(raw, list):
        issues.append(_invalid("variables", "must be a list of variable specs"))
    return specs


def _flow(raw: object, specs: list[VariableSpec], issues: list[Issue]) -> dict[str, str]:
    if raw is None:
        return {}
    try:
        flow = load_flow_config(cast(Mapping[str, object], raw))
    except ConfigError as err:
        issues.append(_invalid("flow", err.problem))
        return {}
    for err in check_flow(flow, [s.name for s in specs]):
        issues.append(_invalid(f"flow.{err.path}" if err.path else "flow", err.problem))
    return {slot.name: f"flow.slots[{i}]" for i, slot in enumerate(flow.slots)}


def _sources(data: Mapping[str, Any], issues: list[Issue]) -> list[ScopeSource]:
    sources = [ScopeSource("main", str(data.get("prompt") or ""), data.get("procedure"))]
    extra = data.get("procedures") or {}
    if not isinstance(extra, dict):
        issues.append(_invalid("procedures", "must map a topic name to {prompt, procedure}"))
        return sources
    for name, scope in cast(dict[str, Any], extra).items():
        if not isinstance(scope, dict):
            issues.append(_invalid(f"procedures.{name}", "must be a mapping {prompt, procedure}"))
            continue
        body = cast(dict[str, Any], scope)
        base = f"procedures.{name}"
        sources.append(
            ScopeSource(
                str(name),
                str(body.get("prompt") or ""),
                body.get("procedure"),
                f"{base}.procedure",
                f"{base}.prompt",
            )  # fmt: skip
        )
    return sources


def _tools(raw: object, tools_py: Path, issues: list[Issue]) -> list[str] | None:
    if isinstance(raw, list):
        return [str(t) for t in cast(list[object], raw)]
    if raw is not None:
        issues.append(_invalid("tools", "must be a list of tool names"))
    if not tools_py.is_file():
        return None
    tree = ast.parse(tools_py.read_text(encoding="utf-8"), str(tools_py))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]


def _resolvable(agent_dir: Path) -> bool:
    try:
        agent_stage(agent_dir, None)
    except (ConfigError, SLMError):
        return False
    return True
