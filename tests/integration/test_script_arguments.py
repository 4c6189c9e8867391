"""The scripts refuse a number their option cannot mean, before they start any work.

Run by hand, ``bench_load --n 0`` stopped on a division by zero, ``bench_seam --turns 0`` on
"percentile of no samples", and ``bench_load --repeat 0`` or ``bench_seam --block 0`` ran on
without end. Each numeric option is declared with a type of ``pipecat_steward.cli.arguments``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.bench_support import python_scripts

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"

# Every numeric option of every script, with a value it cannot mean.
REFUSED = [
    ("bench_checkpoints", "--turns", "0"),
    ("bench_engine", "--repeats", "0"),
    ("bench_load", "--n", "0"),
    ("bench_load", "--n", "1,,10"),
    ("bench_load", "--n", "abc"),
    ("bench_load", "--repeat", "0"),
    ("bench_load", "--calls", "-1"),
    ("bench_load", "--min-calls", "0"),
    ("bench_load", "--processes", "0"),
    ("bench_logs", "--n", "0"),
    ("bench_logs", "--lines", "0"),
    ("bench_mixed", "--copies", "0"),
    ("bench_playout", "--runs", "0"),
    ("bench_playout", "--latency", "-1"),
    ("bench_seam", "--turns", "0"),
    ("bench_seam", "--block", "0"),
    ("bench_seam", "--warmup", "-1"),
    ("bench_slm", "--calls", "0"),
    ("chaos", "--n", "0"),
    ("chaos", "--seed", "-1"),
    ("chaos", "--agree", "-1"),
    ("chaos", "--agree-s2s", "-1"),
    ("chaos", "--slm", "-1"),
    ("measure_state_size", "--sessions", "0"),
]


def test_no_script_declares_a_number_argparse_would_take_unbounded() -> None:
    loose = [
        f"{path.name}: {match.group(0)}"
        for path in python_scripts()
        for match in re.finditer(r"type=(int|float)\b", path.read_text())
    ]
    assert not loose, f"declare these with pipecat_steward.cli.arguments: {loose}"


def test_the_table_names_every_script_with_a_numeric_option() -> None:
    numeric = {p.name for p in python_scripts() if "cli.arguments import" in p.read_text()}
    assert numeric == {script for script, _, _ in REFUSED}


@pytest.mark.parametrize(("script", "option", "value"), REFUSED)
def test_a_bad_number_is_refused_with_the_option_named(
    script: str, option: str, value: str
) -> None:
    path = SCRIPTS / script
    # Should the value be taken after all, the script runs without writing its docs section.
    quiet = ["--no-write"] if '"--no-write"' in path.read_text() else []
    done = subprocess.run(
        [sys.executable, str(path), f"{option}={value}", *quiet],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"argument {option}" in done.stderr and "Traceback" not in done.stderr, done.stderr


def _writers() -> list[str]:
    """The benches that write a section of docs/benchmarks.md (they take ``--docs``)."""
    return [p.name for p in python_scripts() if "add_docs_option(parser)" in p.read_text()]


def test_every_bench_that_writes_a_section_takes_the_shared_docs_option() -> None:
    writers = {p.name for p in python_scripts() if "write_section(" in p.read_text()}
    assert writers and writers == set(_writers())


@pytest.mark.parametrize("script", _writers())
@pytest.mark.parametrize("where", ["a missing folder", "a folder"])
def test_a_docs_file_that_cannot_be_written_is_refused_before_the_bench_runs(
    script: str, where: str, tmp_path: Path
) -> None:
    docs = tmp_path / "missing" / "benchmarks.md" if where == "a missing folder" else tmp_path
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script), f"--docs={docs}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "argument --docs" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_bench_engine_refuses_a_folder_that_is_no_sgd_split_before_timing(tmp_path: Path) -> None:
    argv = [sys.executable, str(SCRIPTS / "bench_engine"), f"--split-dir={tmp_path}", "--no-write"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--split-dir: no schema.json" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("extra", [["--processes=2"], ["--rtvi"], ["--no-client-messages"]])
def test_bench_load_where_refuses_the_options_it_would_not_honour(extra: list[str]) -> None:
    argv = [sys.executable, str(SCRIPTS / "bench_load"), "--where", *extra, "--no-write"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "--where samples one call at a time" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
