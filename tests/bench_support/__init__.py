"""What the benchmark scripts and their tests share: their ``--docs`` option, writing a section
of docs/benchmarks.md, and loading a script as a module."""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

__all__ = [
    "DOCS",
    "add_docs_option",
    "docs_file",
    "python_scripts",
    "script_module",
    "write_section",
]

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
DOCS = ROOT / "docs" / "benchmarks.md"


def python_scripts() -> list[Path]:
    """The Python scripts of ``scripts/`` (no suffix: named by their first line), sorted."""
    return sorted(p for p in SCRIPTS.iterdir() if "python" in p.read_text().split("\n", 1)[0])


def add_docs_option(parser: argparse.ArgumentParser) -> None:
    """``--docs FILE``: the Markdown file a bench writes its section to, checked as it is parsed.

    A bench runs for minutes before it writes: a file it could not write is refused up front.
    """
    parser.add_argument(
        "--docs",
        type=docs_file,
        default=str(DOCS),
        metavar="FILE",
        help="the Markdown file the section is written to (default: docs/benchmarks.md)",
    )


def docs_file(text: str) -> Path:
    """The ``--docs`` path: a file (made when missing) in a folder that exists."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name the Markdown file")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: there is no folder {path.parent} to write in")
    return path


def write_section(docs: Path, text: str) -> None:
    """Replace the section ``text`` heads (its first line, ``## …``) in ``docs``, or append it.

    The other sections are kept as they are; one blank line separates the sections.
    """
    old = docs.read_text(encoding="utf-8") if docs.exists() else "# Benchmarks\n\n"
    heading = text.splitlines()[0]
    section = text.rstrip("\n") + "\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(old):
        new = pattern.sub(lambda _: section, old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + section
    docs.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def script_module(name: str) -> ModuleType:
    """``scripts/<name>`` loaded as a module (its ``main`` not run), for a test to call into."""
    loader = importlib.machinery.SourceFileLoader(f"{name}_under_test", str(SCRIPTS / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = module  # dataclasses look their module up while being built
    loader.exec_module(module)
    return module
