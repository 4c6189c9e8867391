"""The ``steward`` command.

Each subcommand lives in its own module of this package and exposes
``add_parser(subparsers)``, which registers the subcommand and sets ``func`` on its parser;
``func(args) -> int`` runs it. New commands need no edit here.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import pipecat_steward.cli as cli_package


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with every subcommand module found in this package."""
    parser = argparse.ArgumentParser(prog="steward", description="pipecat-steward command line")
    sub = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(cli_package.__path__), key=lambda m: m.name):
        if info.name == "main" or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{cli_package.__name__}.{info.name}")
        add = getattr(module, "add_parser", None)
        if add is not None:
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``steward`` command line and return its exit code."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
