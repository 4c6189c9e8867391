"""``steward new NAME`` scaffolds a folder that validates and passes ``steward test`` as generated."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import warnings
from pathlib import Path

import pytest
from pipecat.evals.scenario import EvalScenarioFile

from pipecat_steward.cli.main import main


@pytest.fixture
def scaffold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["new", "callback_desk", "--dir", str(tmp_path)]) == 0
    assert "steward test" in capsys.readouterr().out
    return tmp_path / "callback_desk"


def test_the_scaffold_has_the_files_and_the_schema_line(scaffold: Path) -> None:
    assert {p.relative_to(scaffold).as_posix() for p in scaffold.rglob("*.*")} == {
        "agent.schema.json",
        "agent.yaml",
        "bot.py",
        "scenarios/happy_path.yaml",
        "tools.py",
    }
    first = (scaffold / "agent.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=agent.schema.json"
    assert "-> dict[str, Any]" in (scaffold / "tools.py").read_text()


def test_the_scaffold_validates(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(scaffold)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("mode", [[], ["--direct"]], ids=["pipeline", "direct"])
def test_the_scaffold_passes_steward_test(
    scaffold: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    assert main(["test", str(scaffold), *mode]) == 0, capsys.readouterr().out
    assert "1 scenario(s): 1 passed, 0 failed" in capsys.readouterr().out


def test_the_scaffold_scenario_is_a_pipecat_eval_file(scaffold: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = EvalScenarioFile.load(scaffold / "scenarios" / "happy_path.yaml")
    assert [s.name for s in loaded] == ["happy_path/scripted"]


def test_new_refuses_an_existing_folder_and_a_bad_name(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (scaffold / "agent.yaml").read_text()
    assert main(["new", "callback_desk", "--dir", str(scaffold.parent)]) == 2
    assert (scaffold / "agent.yaml").read_text() == before
    assert main(["new", "not-a-name", "--dir", str(scaffold.parent)]) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["123abc", "a-b", "Ünïcode", "two words", "", "x/y"])
def test_a_bad_name_is_refused_with_what_a_name_takes(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", name, "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "an ASCII letter or _ first, then ASCII letters, digits or _" in err, err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["class", "_x", "Desk2"])
def test_any_identifier_is_a_name(name: str, tmp_path: Path) -> None:
    assert main(["new", name, "--dir", str(tmp_path)]) == 0
    assert (tmp_path / name / "agent.yaml").is_file()
