"""``steward studio``: each mode's missing settings are named and exit 2 before serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.cli.main import main

CLINIC = str(Path(__file__).resolve().parents[2] / "bots" / "clinic")


def test_text_mode_without_an_llm_names_the_variables(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "STEWARD_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["studio", CLINIC, "--text"]) == 2
    err = capsys.readouterr().err
    assert "STEWARD_LLM_BASE_URL" in err and "OPENAI_API_KEY" in err


def test_a_session_id_needs_the_store_it_was_recorded_in(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["studio", CLINIC, "--replay", "call-7"]) == 2
    assert "--store" in capsys.readouterr().err


def test_a_session_missing_from_the_store_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:{tmp_path / 'events.sqlite'}"
    assert main(["studio", CLINIC, "--replay", "call-7", "--store", store]) == 2
    assert "no session 'call-7'" in capsys.readouterr().err


def test_an_agent_that_does_not_load_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["studio", str(tmp_path / "nowhere"), "--replay", "x.jsonl"]) == 2
    assert capsys.readouterr().err.startswith("steward studio:")


def test_text_and_replay_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["studio", CLINIC, "--text", "--replay", "x.jsonl"])
    assert "not allowed with" in capsys.readouterr().err
