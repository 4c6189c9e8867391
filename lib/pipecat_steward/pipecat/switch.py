"""The kill switch of the model-backed supervision: ``STEWARD_MONITOR_ENABLED=0``.

With it the procedure monitor and the entity extractor never subscribe (no logic_slm call is
made) and gates stay deterministic: a closed judge gate vetoes, naming the unavailable monitor.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["KILL_SWITCH", "monitor_enabled"]

KILL_SWITCH = "STEWARD_MONITOR_ENABLED"
"""Set to ``0`` (or ``false``/``off``/``no``) to disable the monitor and the extractor."""


def monitor_enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether the kill switch leaves the monitor and extractor on (the default)."""
    value = (os.environ if env is None else env).get(KILL_SWITCH, "1").strip().lower()
    return value not in ("0", "false", "off", "no")
