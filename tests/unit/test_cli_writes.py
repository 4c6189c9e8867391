"""A ``steward`` command that cannot write where it was told says so, and leaves nothing behind.

``steward graph -o`` into a folder that does not exist, or ``steward new --dir`` naming a
file, stopped on an ``OSError`` traceback. Every command that writes a file reports the path
and the reason and exits 2, like ``steward schema -o`` did.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pipecat_steward.cli.main import main

BOTS = Path(__file__).resolve().parents[2] / "bots"

# Where a write cannot happen: under a regular file, or onto a folder.
Place = Callable[[Path], Path]
PLACES: dict[str, Place] = {
    "under a file": lambda tmp: _file(tmp) / "out",
    "onto a folder": lambda tmp: tmp,
    "in a missing folder": lambda tmp: tmp / "missing" / "deeper" / "out",
}


def _file(tmp: Path) -> Path:
    path = tmp / "a_file"
    path.write_text("not a folder")
    return path


COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "graph": lambda out: ["graph", str(BOTS / "clinic"), "-o", str(out)],
    "graph dot": lambda out: ["graph", str(BOTS / "clinic"), "--format", "dot", "-o", str(out)],
    "schema": lambda out: ["schema", "-o", str(out)],
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_that_cannot_write_its_file_names_it_and_exits_2(
    command: str, place: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = PLACES[place](tmp_path)
    argv = COMMANDS[command](target)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"steward {argv[0]}: cannot write {target}"), err


@pytest.mark.parametrize("place", ["under a file", "onto a folder"])
def test_new_that_cannot_create_its_folder_names_it_and_leaves_nothing(
    place: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = _file(tmp_path) if place == "under a file" else tmp_path / "taken"
    if place == "onto a folder":
        (where / "my_agent").mkdir(parents=True)
        (where / "my_agent" / "agent.yaml").write_text("kept: true\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main(["new", "my_agent", "--dir", str(where)]) == 2
    assert "steward new: " in capsys.readouterr().err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_new_that_fails_part_way_leaves_no_half_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The disk fills up after the first file: the half-made folder goes, so a retry works.
    write_text = Path.write_text
    calls: list[Path] = []

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        calls.append(self)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return write_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    assert main(["new", "my_agent", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"steward new: cannot create {tmp_path / 'my_agent'}"), err
    assert "No space left" in err and not (tmp_path / "my_agent").exists()
