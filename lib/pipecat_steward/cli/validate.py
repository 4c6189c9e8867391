"""``steward validate AGENT_DIR``: load an agent folder exactly as a call would, then check more.

Validation runs the same loading path as ``steward simulate``, ``steward rehearse`` and
``Steward.from_folder`` (so nothing it accepts fails to load), then cross-checks what a call
would only find later: tool names against ``tools.py``, template placeholders, task outputs,
loops between tasks, procedure tools and variables, and whether a logic_slm stage resolves.

Prints every error and warning with its config path; exits 1 when there are errors, 2 when
the folder cannot be read, 0 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.agent.crosscheck import crosscheck
from pipecat_steward.agent.loader import Inspection, inspect_agent, procedure_sources
from pipecat_steward.cli._slm_agent import agent_stage
from pipecat_steward.core.procedures import MAIN, Issue, ScopeSource
from pipecat_steward.core.procedures.validate import validate_procedures
from pipecat_steward.exceptions import ConfigError, SLMError

__all__ = ["add_parser", "run", "validate_agent"]


def add_parser(sub: Any) -> None:
    """Register ``steward validate``."""
    parser = sub.add_parser("validate", help="load an agent as a call would and check more")
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
    errors = sum(i.severity == "error" for i in issues)
    print(f"{args.agent_dir}: {errors} error(s), {len(issues) - errors} warning(s)")
    return 1 if errors else 0


def validate_agent(agent_dir: Path) -> list[Issue]:
    """Validate an agent folder and return every issue (errors and warnings).

    Raises:
        ConfigError: ``agent.yaml`` is missing or is not a YAML mapping.
    """
    found = inspect_agent(agent_dir)
    resolvable, aux = _aux(agent_dir)
    if any(i.path.startswith("aux") for i in found.issues):
        aux = []  # the loader already named the malformed entry
    issues = [
        *found.issues,
        *crosscheck(found),
        *_procedures(found, resolvable),
        *_idempotency(found, agent_dir / "tools.py"),
        *aux,
    ]
    return list({(i.path, i.message): i for i in reversed(issues)}.values())[::-1]


def _procedures(found: Inspection, resolvable: bool) -> list[Issue]:
    cfg = found.config
    sources = procedure_sources(cfg) or [ScopeSource(MAIN, cfg.prompt, None)]
    flow = cfg.flow.slots if cfg.flow else []
    tools = list(cfg.tools) if cfg.tools else found.tool_names
    report = validate_procedures(
        sources,
        variables=cfg.variables,
        tools=tools,
        logic_slm_resolvable=resolvable,
        writes={slot.name: f"flow.slots[{i}]" for i, slot in enumerate(flow)},
    )
    return list(report.issues)


def _idempotency(found: Inspection, tools_py: Path) -> list[Issue]:
    """Warn about intents whose executor may act twice when replayed after a crash."""
    marked = _marked_idempotent(tools_py)
    issues: list[Issue] = []
    for i, intent in enumerate(found.config.intents or []):
        if intent.read_only or not intent.executor or intent.executor in marked:
            continue
        message = (
            f"executor {intent.executor!r} is called again with the same idempotency_key when "
            "a crash lands between its call and the checkpoint of its result; make it return "
            "the recorded outcome for a key it already acted on and mark it @idempotent "
            "(from pipecat_steward.runtime.transactions), or set read_only: true on an intent "
            "that changes nothing"
        )
        issues.append(
            Issue(
                "warning",
                "executor_not_idempotent",
                f"intents[{i}].executor",
                message,
            )
        )
    return issues


def _marked_idempotent(tools_py: Path) -> set[str]:
    """Functions of tools.py decorated ``@idempotent`` (read from the source, not imported)."""
    try:
        tree = ast.parse(tools_py.read_bytes(), str(tools_py))
    except (OSError, SyntaxError, ValueError):  # missing or broken: the loader names the problem
        return set()
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


def _aux(agent_dir: Path) -> tuple[bool, list[Issue]]:
    """Whether a logic_slm stage resolves; a malformed entry or unknown stack is an error."""
    try:
        agent_stage(agent_dir, None)
    except SLMError:
        return False, []
    except ConfigError as exc:
        # the loader checked the shape of aux:, so what is left is the stack's name
        return False, [Issue("error", "invalid_config", "aux.stack", str(exc))]
    return True, []
