"""A STAR folder whose files cannot be read stops the replay with the file and the place.

Each case breaks one file of a small valid folder the way a truncated download or a hand edit
would; the replay must raise ``StarFormatError`` naming it, and ``scripts/star_replay`` must
print that and exit with 2, never a traceback.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pipecat_steward.replay.star_data import StarFormatError
from pipecat_steward.replay.star_replay import replay_star

ROOT = Path(__file__).resolve().parents[2]
CHART = {"graph": {"hello": "ask_name", "ask_name": "query"}, "replies": {"ask_name": "Name?"}}
DIALOGUE = {
    "DialogueID": 1,
    "Scenario": {"Happy": True, "WizardCapabilities": [{"Task": "desk"}]},
    "Events": [{"Agent": "User", "Action": "utter", "Text": "Hi"}],
}


def _folder(root: Path) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "desk.json").write_text(json.dumps(CHART), encoding="utf-8")
    with gzip.open(root / "dialogues_001.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(DIALOGUE) + "\n\n")
    return root


def _task(text: str) -> Callable[[Path], object]:
    return lambda folder: (folder / "tasks" / "desk.json").write_text(text, encoding="utf-8")


def _dialogues(data: bytes) -> Callable[[Path], object]:
    return lambda folder: (folder / "dialogues_001.jsonl.gz").write_bytes(data)


def _lines(*lines: str) -> bytes:
    return gzip.compress("\n".join(lines).encode("utf-8"))


CASES: list[tuple[str, Callable[[Path], object], str]] = [
    ("truncated flowchart", _task('{"graph": '), "tasks/desk.json: not readable as JSON"),
    (
        "flowchart that is a list",
        _task("[1]"),
        "desk.json: top level: Input should be a valid dictionary",
    ),
    ("dialogues that are no gzip", _dialogues(b"garbage"), "not readable as gzipped JSON lines"),
    (
        "dialogues cut short",
        _dialogues(_lines(json.dumps(DIALOGUE))[:20]),
        "not readable as gzipped JSON lines",
    ),
    (
        "a line that is no JSON",
        _dialogues(_lines(json.dumps(DIALOGUE), "{oops")),
        "dialogues_001.jsonl.gz, line 2: top level: Invalid JSON",
    ),
    (
        "a line that is no object",
        _dialogues(_lines("[1, 2]")),
        "line 1: top level: Input should be an object",
    ),
]


@pytest.mark.parametrize(("case", "breaking", "says"), CASES, ids=[c[0] for c in CASES])
def test_an_unreadable_file_is_reported_with_its_place(
    tmp_path: Path, case: str, breaking: Callable[[Path], object], says: str
) -> None:
    folder = _folder(tmp_path / "star")
    breaking(folder)
    with pytest.raises(StarFormatError) as raised:
        replay_star(folder)
    assert says in str(raised.value), case


def test_the_script_prints_the_problem_and_exits_2(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "star")
    _dialogues(b"garbage")(folder)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "star_replay"), "--data", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("star_replay: ") and "Traceback" not in done.stderr


def test_the_small_folder_itself_replays(tmp_path: Path) -> None:
    assert replay_star(_folder(tmp_path / "star"))["dialogues"] == 1
