"""Writing a command's output file: a path that cannot be written is a message, not a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["write_output"]


def write_output(command: str, path: Path, data: str | bytes) -> int:
    """Write ``data`` to ``path``: 0, or 2 with the path and the reason on stderr.

    The folder must exist (as for a shell's redirect); an existing file is replaced.
    """
    try:
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    except OSError as exc:
        print(f"steward {command}: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0
