"""Suite-wide settings: metering goes to a throwaway ledger, never into the working tree."""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault(
    "STEWARD_LEDGER", str(Path(tempfile.mkdtemp(prefix="steward-ledger-")) / "usage.sqlite")
)

# Pipecat warns on import about its own deprecated modules (audioop, old TTS bases); with
# warnings as errors, whichever test file imported it first would fail at collection.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import pipecat_steward.testing.monitored  # noqa: F401  (imports the pipeline, steward, monitor)
