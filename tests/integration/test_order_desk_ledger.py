"""The order desk's ledger file is one backend record shared by every worker process: concurrent
executors in several processes must not lose each other's effects (a lost record would make a
replay act again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 4
CALLS = 40

ACT = """
import sys
sys.path.insert(0, sys.argv[1])
import tools
for n in range(int(sys.argv[3])):
    tools.send_statement("May", f"{sys.argv[2]}-{n}")
"""


def test_concurrent_processes_never_lose_an_effect(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.json"
    env = {**os.environ, "STEWARD_ORDER_DESK_LEDGER": str(ledger), "STEWARD_ORDER_DESK_LATENCY": ""}
    folder = str(ROOT / "bots" / "order_desk")
    procs = [
        subprocess.Popen([sys.executable, "-c", ACT, folder, f"p{i}", str(CALLS)], env=env)
        for i in range(PROCESSES)
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    book = json.loads(ledger.read_text())
    keys = [e["key"] for e in book["effects"]]
    assert len(keys) == len(set(keys)) == PROCESSES * CALLS
    assert len(book["attempts"]) == PROCESSES * CALLS
