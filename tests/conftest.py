"""Suite-wide settings: metering goes to a throwaway ledger, never into the working tree."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault(
    "STEWARD_LEDGER", str(Path(tempfile.mkdtemp(prefix="steward-ledger-")) / "usage.sqlite")
)
