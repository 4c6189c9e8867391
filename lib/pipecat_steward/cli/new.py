"""``steward new NAME``: scaffold an agent folder that validates and passes ``steward test``.

Writes ``NAME/agent.yaml`` (with the editor schema line), ``NAME/tools.py`` (typed setter and
executor stubs with the return contracts spelled out), ``NAME/scenarios/happy_path.yaml`` (a
scripted scenario with its checks, also a ``pipecat eval`` file) and ``NAME/bot.py`` (the
runner entry for a live call or ``pipecat eval``). It refuses to write over an existing folder.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["TEMPLATES", "add_parser", "files", "run"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TEMPLATES = {
    "agent.yaml": "agent.yaml.tmpl",
    "tools.py": "tools.py.tmpl",
    "scenarios/happy_path.yaml": "happy_path.yaml.tmpl",
    "bot.py": "bot.py.tmpl",
}
"""Each scaffold file and its template in ``cli/scaffold`` (``str.format`` fields: ``name``,
``folder``, ``title``; literal braces doubled)."""


def add_parser(sub: Any) -> None:
    """Register ``steward new``."""
    parser = sub.add_parser("new", help="scaffold an agent folder that validates and passes tests")
    parser.add_argument("name", help="the agent's name (a Python identifier); the folder's name")
    parser.add_argument("--dir", type=Path, default=Path("."), help="where to create the folder")
    parser.set_defaults(func=run)


def files(name: str, folder: str) -> dict[str, str]:
    """The scaffold's files, relative path → text."""
    title = name.replace("_", " ").title()
    fields = {"name": name, "folder": folder, "title": title}
    scaffold = resources.files(__package__) / "scaffold"
    return {
        path: (scaffold / template).read_text(encoding="utf-8").format(**fields)
        for path, template in TEMPLATES.items()
    }


def run(args: argparse.Namespace) -> int:
    """Write the scaffold; exit 2 on a bad name or an existing folder."""
    if not _NAME.match(args.name):
        print(
            f"steward new: {args.name!r} is not a valid name: an ASCII letter or _ first, then "
            "ASCII letters, digits or _ (it names the folder and the agent)",
            file=sys.stderr,
        )
        return 2
    folder = args.dir / args.name
    if folder.exists():
        print(f"steward new: {folder} already exists; not touching it", file=sys.stderr)
        return 2
    try:
        _write(folder, files(args.name, str(folder)))
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)  # made here just now: a retry starts clean
        print(f"steward new: cannot create {folder}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"created {folder}: agent.yaml, tools.py, scenarios/happy_path.yaml, bot.py")
    print(f"next: steward validate {folder} && steward test {folder}")
    return 0


def _write(folder: Path, scaffold: dict[str, str]) -> None:
    """Write the scaffold's files, and the agent.yaml JSON Schema beside them for editors."""
    schema = _schema()
    if schema:
        scaffold = {**scaffold, "agent.schema.json": schema}
    for relative, text in scaffold.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _schema() -> str | None:
    """The agent.yaml JSON Schema from ``steward schema``, when that command exists."""
    from pipecat_steward.cli.main import build_parser

    parser = build_parser()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            args = parser.parse_args(["schema"])
            code = int(args.func(args))
    except SystemExit:
        return None
    return out.getvalue() if code == 0 and out.getvalue().strip() else None
