"""``steward prompts [AGENT_DIR] [--scope SCOPE]``: preview the logic_slm instructions.

Prints each scope's effective instruction — the catalog default or the override that replaced
it, with the rung it came from — exactly as the runtime resolves it. The catalog's scopes are
the runtime consumers plus ``derive`` (``steward derive``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.cli._slm_agent import agent_stage
from pipecat_steward.exceptions import ConfigError, SLMResolutionError
from pipecat_steward.slm.prompts import DEFAULT_PROMPTS

__all__ = ["add_parser", "run"]

_CATALOG = tuple(DEFAULT_PROMPTS)


def add_parser(sub: Any) -> None:
    """Register ``steward prompts``."""
    parser = sub.add_parser("prompts", help="preview the logic_slm instructions per scope")
    parser.add_argument("agent_dir", type=Path, nargs="?", metavar="AGENT_DIR")
    parser.add_argument("--scope", choices=_CATALOG, help="show one scope only")
    parser.add_argument("--stack", help="stack manifest name (overrides agent.yaml aux.stack)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the instructions; without AGENT_DIR, the catalog defaults."""
    scopes = (args.scope,) if args.scope else _CATALOG
    if args.agent_dir is None and args.stack is None:
        for scope in scopes:
            _print(scope, DEFAULT_PROMPTS[scope], "catalog default")
        return 0
    try:
        stage, _ = agent_stage(args.agent_dir, args.stack)
    except (ConfigError, SLMResolutionError) as err:
        print(f"steward prompts: {err}", file=sys.stderr)
        return 2
    for scope in scopes:
        source = stage.sources.get(f"prompt.{scope}", "catalog default")
        _print(scope, stage.prompts[scope], source)
    return 0


def _print(scope: str, text: str, source: str) -> None:
    """Print one scope's block."""
    print(f"== {scope} ({source})\n{text}\n")
