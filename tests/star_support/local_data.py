"""Where the real STAR data is, when this machine has it."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def real_star_data() -> Path | None:
    """The STAR folder ``STAR_DATA`` names, else ``shared/data/star`` beside the repository."""
    named = os.environ.get("STAR_DATA")
    candidate = Path(named) if named else ROOT.parent / "shared" / "data" / "star"
    return candidate if (candidate / "tasks").is_dir() else None
