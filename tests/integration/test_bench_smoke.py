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
    if name == "bench_load":  # counted, not timed: no finished call stays in memory
        assert "(met: no call is kept)" in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize(
    ("flag", "title"), [("--no-client-messages", "no client messages"), ("--rtvi", "with RTVI")]
)
def test_bench_load_writes_a_variant_to_a_section_of_its_own(
    flag: str, title: str, tmp_path: Path
) -> None:
    # --no-client-messages: the steward of a call no client reads; --rtvi: both variants with
    # pipecat's RTVI processor and observer. A variant runs in the child processes too, and
    # its section never replaces the recorded one of the default pipelines.
    work = tmp_path / "work"
    work.mkdir()
    docs = tmp_path / "benchmarks.md"
    recorded = "## Load\n\nThe default pipelines' table.\n"
    docs.write_text(f"# Benchmarks\n\n{recorded}\n## Other\n\nKept.\n", encoding="utf-8")
    done = _run("bench_load", [*SMOKE_ARGS["bench_load"], flag, "--docs", str(docs)], work)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith(f"## Load ({title})\n"), done.stdout[:200]
    assert done.stdout.count("Variant: ") == 1, "the section says which variant it measured"
    written = docs.read_text(encoding="utf-8")
    assert recorded in written and "## Other\n\nKept.\n" in written
    assert written.count(f"## Load ({title})\n") == 1
    assert "bella_notte, N=2" in written.split(f"## Load ({title})")[1]
    assert not list(work.iterdir()), "a benchmark removes its temporary files"


def test_bench_load_where_writes_the_steward_s_cpu_by_entry_point(tmp_path: Path) -> None:
    # --where: one call at a time, each variant timed and steward calls sampled; the section
    # is its own and leaves the Load section as it is.
    work = tmp_path / "work"
    work.mkdir()
    docs = tmp_path / "benchmarks.md"
    recorded = "## Load\n\nThe default pipelines' table.\n"
    docs.write_text(f"# Benchmarks\n\n{recorded}", encoding="utf-8")
    args = ["--where", "--bots", "bella_notte", "--calls", "2", "--docs", str(docs)]
    done = _run("bench_load", args, work)
    assert done.returncode == 0, done.stderr[-3000:]
    written = docs.read_text(encoding="utf-8")
    assert recorded in written
    where = written.split("## Load (where the steward's CPU goes)\n")[1]
    assert "- bella_notte: 2 calls of each variant timed, steward/plain CPU **" in where
    assert "| entry point | of the call's CPU | of the steward's own |" in where  # too few
    # samples in two calls to say which entry points show
