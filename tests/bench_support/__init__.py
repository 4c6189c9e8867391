"""What the benchmark scripts and their tests share: writing a section of docs/benchmarks.md,
and loading a script as a module."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["script_module", "write_section"]

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


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
