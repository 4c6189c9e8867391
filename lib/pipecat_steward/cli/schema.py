"""``steward schema [--markdown] [-o FILE]``: the JSON Schema (or Markdown reference) of agent.yaml.

Both come from the models the loader validates with. Point an editor at the schema with a first
line ``# yaml-language-server: $schema=PATH/agent.schema.json`` in ``agent.yaml``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.agent.reference import agent_schema, reference_markdown
from pipecat_steward.cli._files import write_output

__all__ = ["add_parser", "render", "run"]


def add_parser(sub: Any) -> None:
    """Register ``steward schema``."""
    parser = sub.add_parser("schema", help="print the JSON Schema of agent.yaml")
    parser.add_argument(
        "--markdown", action="store_true", help="print the Markdown reference instead"
    )
    parser.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    parser.set_defaults(func=run)


def render(markdown: bool = False) -> str:
    """The schema as indented JSON, or the Markdown reference."""
    if markdown:
        return reference_markdown()
    return json.dumps(agent_schema(), indent=2, ensure_ascii=False) + "\n"


def run(args: argparse.Namespace) -> int:
    """Print or write the schema; 2 when the file cannot be written."""
    text = render(args.markdown)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    return write_output("schema", args.output, text)
