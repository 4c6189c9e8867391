"""Code, docs and bots state each rule in plain words: no pointer at a document outside the repo.

The source documents, design notes and issue tracker are not shipped, so a comment such as
"see seed 000 §3", "issue 7", "DESIGN §5" or "notes/x.md" tells a reader nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("lib", "docs", "bots", "scripts", "README.md")
TEXT_SUFFIXES = {"", ".py", ".md", ".yaml", ".yml", ".json", ".toml", ".txt", ".j2", ".sh"}
POINTER = re.compile(r"\b[Ss]eeds?[ -]0\d\d\b|\b[Ii]ssue #?\d|\bDESIGN\b|§|\bnotes/")


def _files() -> list[Path]:
    found: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        found += [
            p for p in candidates if p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts
        ]
    return found


def _pointers(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    rel = path.relative_to(ROOT)
    return [
        f"{rel}:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if POINTER.search(line)
    ]


@pytest.mark.parametrize(
    ("line", "points"),
    [
        ("rules of seed 003", True),
        ("the seed-003 completion rule", True),
        ("(seed 000 §3)", True),
        ("Seed 004's examples", True),
        ("the monitor itself is issue 7", True),
        ("DESIGN §10", True),
        ("see notes/injector-probe.md", True),
        ("with seed 4242 and 200 with seed 7", False),
        ("a validation issue: the path and the fix", False),
        ("design the prompt", False),
    ],
)
def test_the_pattern_tells_pointers_from_prose(line: str, points: bool) -> None:
    assert bool(POINTER.search(line)) is points


def test_no_file_points_outside_the_repository() -> None:
    found = [hit for path in _files() for hit in _pointers(path)]
    assert found == [], "state the rule in plain words instead:\n" + "\n".join(found)
