"""A split not in SGD's format stops the replay with the file, the place and the problem.

Each case breaks one thing in a copy of the fixture split (seven dev dialogues) the way a
truncated download, a converted variant or a hand edit would; the replay must raise
``SgdFormatError`` saying where, and ``scripts/sgd_replay`` must print it and exit with 2.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.replay import SgdFormatError, replay_split

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "sgd"
Raw = Any


def _schema(edit: Callable[[list[Raw]], None]) -> Callable[[Path], None]:
    def write(split: Path) -> None:
        services = json.loads((split / "schema.json").read_text(encoding="utf-8"))
        edit(services)
        (split / "schema.json").write_text(json.dumps(services), encoding="utf-8")

    return write


def _dialogues(edit: Callable[[list[Raw]], object]) -> Callable[[Path], None]:
    def write(split: Path) -> None:
        path = split / "dialogues_001.json"
        dialogues = json.loads(path.read_text(encoding="utf-8"))
        changed = edit(dialogues)
        path.write_text(json.dumps(dialogues if changed is None else changed), encoding="utf-8")

    return write


def _truncate(split: Path) -> None:
    text = (split / "schema.json").read_text(encoding="utf-8")
    (split / "schema.json").write_text(text[: len(text) // 2], encoding="utf-8")


def _bad_gzip(split: Path) -> None:
    (split / "schema.json").unlink()
    (split / "schema.json.gz").write_bytes(b"not gzip at all")


def _no_state(dialogues: list[Raw]) -> None:
    del dialogues[0]["turns"][2]["frames"][0]["state"]


def _drop_service(services: list[Raw]) -> None:
    services[:] = [s for s in services if s["service_name"] != "Buses_1"]


CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("truncated schema", _truncate, "schema.json: not readable as JSON"),
    ("schema.json.gz that is no gzip", _bad_gzip, "schema.json.gz: not readable as gzip"),
    (
        "a service without intents",
        _schema(lambda s: s[0].pop("intents")),
        "schema.json: service 0: intents: Field required",
    ),
    (
        "an intent naming a slot its service lacks",
        _schema(lambda s: s[0]["intents"][0]["required_slots"].append("moon_phase")),
        "names slot moon_phase, which the service does not define",
    ),
    ("a service defined twice", _schema(lambda s: s.append(s[0])), "is defined twice"),
    (
        "a dialogues file that is no list",
        _dialogues(lambda d: {"dialogues": d}),
        "dialogues_001.json: top level: Input should be a valid array",
    ),
    (
        "a USER frame without a state",
        _dialogues(_no_state),
        "dialogue 0: turns.2.frames.0: a USER frame needs",
    ),
    (
        "a speaker that is neither USER nor SYSTEM",
        _dialogues(lambda d: d[0]["turns"][0].update(speaker="BOT")),
        "dialogues_001.json: dialogue 0: turns.0.speaker: Input should be 'USER' or 'SYSTEM'",
    ),
    (
        "slot values that are not lists",
        _dialogues(
            lambda d: d[0]["turns"][0]["frames"][0]["state"].update(slot_values={"city": "X"})
        ),
        "dialogue 0: turns.0.frames.0.state.slot_values.city: Input should be a valid array",
    ),
    ("a service the schema lacks", _schema(_drop_service), "uses Buses_1, which schema.json"),
    (
        "a slot value with no variant",
        _dialogues(
            lambda d: d[0]["turns"][0]["frames"][0]["state"].update(slot_values={"city": []})
        ),
        "dialogue 0: turns.0.frames.0.state.slot_values.city: List should have at least 1 item",
    ),
    (
        "a slot name that is no identifier",
        _schema(lambda s: s[0]["slots"][0].update(name="from location")),
        "service 0: slots.0.name: String should match pattern",
    ),
]


def _broken(tmp_path: Path, breaking: Callable[[Path], None]) -> Path:
    split = tmp_path / "split"
    shutil.copytree(FIXTURE, split, ignore=shutil.ignore_patterns("*.md"))
    breaking(split)
    return split


@pytest.mark.parametrize(("case", "breaking", "says"), CASES, ids=[c[0] for c in CASES])
def test_a_split_out_of_format_is_reported_where_it_breaks(
    tmp_path: Path, case: str, breaking: Callable[[Path], None], says: str
) -> None:
    split = _broken(tmp_path, breaking)
    with pytest.raises(SgdFormatError) as raised:
        replay_split(split)
    assert says in str(raised.value), case


@pytest.mark.parametrize("index", [0, 6])
def test_the_script_prints_the_problem_and_exits_2(tmp_path: Path, index: int) -> None:
    case, breaking, says = CASES[index]
    split = _broken(tmp_path, breaking)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sgd_replay"), "--split-dir", str(split)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, (case, done.stderr)
    assert done.stderr.startswith("sgd_replay: ") and says in done.stderr
    assert "Traceback" not in done.stderr


def test_the_fixture_split_and_its_gzipped_copy_are_in_format(tmp_path: Path) -> None:
    for name in ("schema.json", "dialogues_001.json"):
        with gzip.open(tmp_path / f"{name}.gz", "wb") as out:
            out.write((FIXTURE / name).read_bytes())
    assert replay_split(tmp_path)["dialogues"] == replay_split(FIXTURE)["dialogues"] == 7
