"""``steward test`` and ``simulate`` never report success for a run that played nothing.

A file or folder holding only persona simulations (which ``pipecat eval`` runs) printed ``0
scenario(s): 0 passed, 0 failed`` and exited 0, and ``simulate`` printed nothing and exited 0:
a CI job would read a check that ran nothing as passed. Both commands now load their paths the
same way and exit 2 naming what was found; ``test`` wrote an empty folder's message to stdout
as a Python list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.cli.main import main

BOT = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
SIMULATION = "  - name: p\n    persona: a caller\n    goal: book a table\n    success: booked\n"
SCRIPTED = "  - name: s\n    turns:\n      - user: Hi there\n"


def _file(folder: Path, name: str, *entries: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\nscenarios:\n{''.join(entries)}", encoding="utf-8")
    return path


def _given(case: str, tmp: Path) -> tuple[Path, str]:
    """The path given for ``case`` and the words of the refusal."""
    if case == "a file of simulations only":
        path = _file(tmp, "sims", SIMULATION, SIMULATION.replace("name: p", "name: q"))
        return path, f"no scripted scenario in {path} (2 persona simulation(s)"
    if case == "a folder of simulations only":
        _file(tmp / "only", "sims", SIMULATION)
        return tmp / "only", f"no scripted scenario in {tmp / 'only'} (1 persona simulation(s)"
    (tmp / "empty").mkdir()
    return tmp / "empty", f"no scenario files in {tmp / 'empty'}"


CASES = ["a file of simulations only", "a folder of simulations only", "an empty folder"]


@pytest.mark.parametrize("command", ["test", "simulate"])
@pytest.mark.parametrize("case", CASES)
def test_a_run_with_nothing_to_play_exits_2_and_says_why(
    command: str, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, words = _given(case, tmp_path)
    assert main([command, str(BOT), str(path), "--direct"]) == 2
    out, err = capsys.readouterr()
    assert words in err
    assert "passed" not in out and "PosixPath" not in out + err


@pytest.mark.parametrize("command", ["test", "simulate"])
def test_simulations_beside_a_scripted_scenario_are_skipped_and_it_plays(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, "mixed", SIMULATION, SCRIPTED)
    assert main([command, str(BOT), str(path), "--direct"]) == 0
    out = capsys.readouterr().out
    assert "Hi there" in out or "1 scenario(s): 1 passed" in out
    if command == "test":
        assert "SKIP mixed/p (a persona simulation: run it with pipecat eval)" in out
