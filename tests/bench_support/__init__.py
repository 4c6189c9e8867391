"""What the benchmark scripts share: writing their section of docs/benchmarks.md."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["write_section"]


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
