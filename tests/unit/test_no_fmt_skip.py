"""The formatter lays out all code: no statement is exempted to pack it onto fewer lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKERS = tuple("# fmt: " + word for word in ("skip", "off"))


def _python_files() -> list[Path]:
    found = [p for d in ("lib", "tests", "bots") for p in (ROOT / d).rglob("*.py")]
    scripts = [p for p in (ROOT / "scripts").iterdir() if p.is_file()]
    return found + [p for p in scripts if _is_python(p)]


def _is_python(path: Path) -> bool:
    try:
        ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return False
    return True


def test_no_statement_is_exempt_from_the_formatter() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _python_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(marker in line for marker in MARKERS)
    ]
    assert found == [], (
        "remove the marker and let `ruff format` lay the statement out: " + ", ".join(found)
    )
