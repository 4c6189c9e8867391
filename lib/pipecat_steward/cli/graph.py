"""``steward graph AGENT``: draw an agent (slots, tasks, readback groups, procedure steps, gates).

Prints Mermaid by default (GitHub renders it inside a ``mermaid`` fence); ``--format dot``
prints Graphviz's DOT; ``--format svg`` / ``png`` runs Graphviz's ``dot`` and needs it
installed (Debian/Ubuntu: ``apt-get install graphviz``; macOS: ``brew install graphviz``).
``-o FILE`` writes instead of printing; the format follows the file's suffix when not given.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pipecat_steward.cli._files import write_output
from pipecat_steward.exceptions import StewardError

__all__ = ["NO_DOT", "add_parser", "render", "run"]

FORMATS = ("mermaid", "dot", "svg", "png")
_SUFFIX = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot"}
NO_DOT = (
    "steward graph: {fmt} needs Graphviz's `dot`, which is not installed "
    "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz). "
    "Mermaid output needs nothing: steward graph AGENT --format mermaid"
)


def add_parser(sub: Any) -> None:
    """Register ``steward graph``."""
    parser = sub.add_parser("graph", help="draw an agent: Mermaid, DOT, or SVG/PNG via Graphviz")
    parser.add_argument("agent", type=Path, help="agent folder (agent.yaml + tools.py)")
    parser.add_argument("--format", choices=FORMATS, help="output format (default: mermaid)")
    parser.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    parser.set_defaults(func=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    suffix = args.output.suffix.lower() if args.output else ""
    return _SUFFIX.get(suffix) or (suffix[1:] if suffix[1:] in FORMATS else "mermaid")


def render(agent_dir: Path, fmt: str) -> bytes:
    """The agent drawn in ``fmt``.

    Raises:
        StewardError: the agent does not load, or ``dot`` is needed and missing.
    """
    from pipecat_steward.agent.graph import agent_graph, to_dot, to_mermaid
    from pipecat_steward.agent.loader import load_agent

    graph = agent_graph(load_agent(agent_dir))
    if fmt == "mermaid":
        return to_mermaid(graph).encode()
    source = to_dot(graph)
    if fmt == "dot":
        return source.encode()
    dot = shutil.which("dot")
    if dot is None:
        raise StewardError(NO_DOT.format(fmt=fmt.upper()))
    done = subprocess.run(
        [dot, f"-T{fmt}"], input=source.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        raise StewardError(f"steward graph: dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def run(args: argparse.Namespace) -> int:
    """Draw the agent; exit 2 when it does not load or Graphviz is needed and missing."""
    fmt = _format(args)
    try:
        data = render(args.agent, fmt)
    except (StewardError, OSError) as exc:
        message = str(exc)
        prefix = "" if message.startswith("steward graph:") else "steward graph: "
        print(prefix + message, file=sys.stderr)
        return 2
    if args.output:
        return write_output("graph", args.output, data)
    if fmt in ("svg", "png") and sys.stdout.isatty():
        print("steward graph: give -o FILE for SVG/PNG output", file=sys.stderr)
        return 2
    sys.stdout.buffer.write(data)
    return 0
