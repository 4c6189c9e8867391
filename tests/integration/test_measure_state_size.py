"""Smoke run of scripts/measure_state_size (the Redis sizing figures in docs/deploying.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.storage_support.redis_server import redis_binary

ROOT = Path(__file__).resolve().parents[2]


def test_the_state_size_measure_runs_on_a_real_redis() -> None:
    redis_binary()
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "measure_state_size"), "--sessions", "50"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = re.findall(
        r"^(\w+): largest checkpoint (\d+) B .* (\d+) B per session", done.stdout, re.M
    )
    assert [r[0] for r in rows] == ["order_desk", "bella_notte"]
    assert all(0 < int(size) < int(per) for _, size, per in rows), rows
