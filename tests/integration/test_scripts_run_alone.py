"""Every Python script in ``scripts/`` runs as the README runs it: by its own path, from a shell.

A user's shell has no virtual environment activated, so a script must find the project's
interpreter itself. The bench smoke runs start scripts with the test's own interpreter and
cannot see a script whose first line picks another one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.bench_support import python_scripts

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = python_scripts()


def _plain_shell() -> dict[str, str]:
    """The environment of a shell with no virtual environment: the system's PATH only."""
    return {"PATH": os.defpath.lstrip(":") or "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}


def test_the_scripts_are_found() -> None:
    assert {"bench_load", "bench_mixed", "sgd_replay"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_script_runs_by_its_own_path_from_a_plain_shell(script: Path) -> None:
    done = subprocess.run(
        [str(script), "--help"],
        cwd=ROOT,
        env=_plain_shell(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
