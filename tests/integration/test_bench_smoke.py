"""Every benchmark script runs: a few iterations, nothing written, no temporary file left, exit 0.

A change that breaks a benchmark (an import, a signature, an event-loop clash) fails here
instead of the next time someone regenerates docs/benchmarks.md. No timing is asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMOKE_ARGS: dict[str, list[str]] = {
    "bench_checkpoints": ["--turns", "3"],
    "bench_engine": ["--repeats", "1"],
    "bench_logs": ["--n", "1,3", "--lines", "50"],
    "bench_mixed": ["--copies", "2", "--bots", "lead_capture"],
    "bench_load": ["--bots", "bella_notte", "--n", "1,2", "--repeat", "2", "--min-calls", "1"]
    + ["--processes", "2"],
    "bench_monitor": [],
    "bench_playout": ["--runs", "1", "--latency", "0.05"],
    "bench_seam": ["--turns", "2", "--warmup", "0"],
    "bench_slm": ["--calls", "3", "--no-local-model"],
}


def test_every_bench_script_has_a_smoke_run() -> None:
    scripts = {p.name for p in (ROOT / "scripts").glob("bench_*")}
    assert scripts == set(SMOKE_ARGS)


def _run(name: str, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, str(ROOT / "scripts" / name), *args]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where its temporary files go
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", sorted(SMOKE_ARGS))
def test_bench_smoke(name: str, tmp_path: Path) -> None:
    done = _run(name, [*SMOKE_ARGS[name], "--no-write"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "a benchmark prints its section"
    assert not list(tmp_path.iterdir()), "a benchmark removes its temporary files"


@pytest.mark.parametrize("flag", ["--no-client-messages", "--rtvi"])
def test_bench_load_measures_a_variant_without_writing_it(flag: str, tmp_path: Path) -> None:
    # --no-client-messages: the steward of a call no client reads; --rtvi: both variants with
    # pipecat's RTVI processor and observer. A variant runs in the child processes too; it
    # never replaces the recorded section.
    variant = [*SMOKE_ARGS["bench_load"], flag]
    done = _run("bench_load", [*variant, "--no-write"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "bella_notte, N=2" in done.stdout
    assert done.stdout.count("Variant: ") == 1, "the output says which variant it measured"
    refused = _run("bench_load", variant, tmp_path)
    assert refused.returncode == 2 and f"{flag} measures a variant" in refused.stderr
