"""``steward forecast`` and ``steward prompts`` through the real CLI dispatcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.cli.main import main


def agent(tmp_path: Path, text: str) -> Path:
    (tmp_path / "agent.yaml").write_text(text)
    return tmp_path


def test_forecast_prints_cost_per_call_and_per_thousand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(tmp_path, "name: x\naux:\n  stack: openai\n")
    assert main(["forecast", str(folder), "--turns", "12"]) == 0
    out = capsys.readouterr().out
    assert "status: complete" in out
    assert "extraction  openai/gpt-4o-mini" in out
    assert "$0.0000765" in out and "$0.0765" in out  # 350/40 per call, per 1,000 calls
    assert "per conversation of 12 turns" in out


def test_forecast_unpriced_model_is_partial_with_the_gap_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(
        tmp_path,
        "aux:\n  stack: openai\n  logic_slm:\n    config:\n"
        "      scope_models: {adherence: gpt-9-preview}\n",
    )
    assert main(["forecast", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "status: partial" in out and "unpriced" in out
    assert "GAP: no price for openai/gpt-9-preview (adherence)" in out
    assert "(known part only)" in out


def test_forecast_self_hosted_is_an_explicit_zero_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(tmp_path, "aux:\n  stack: self-hosted\n")
    assert main(["forecast", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "status: complete" in out
    assert "note: Self-hosted endpoint: priced at an explicit zero" in out


def test_forecast_without_agent_yaml_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["forecast", str(tmp_path / "missing")]) == 2
    assert "no agent.yaml here" in capsys.readouterr().err  # as every command says it


def test_forecast_without_a_stack_names_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(tmp_path, "name: no-aux\n")
    assert main(["forecast", str(folder)]) == 2
    assert "no provider resolved" in capsys.readouterr().err


def test_forecast_stack_option_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(tmp_path, "aux:\n  stack: openai\n")
    assert main(["forecast", str(folder), "--stack", "bedrock"]) == 0
    assert "bedrock/amazon.nova-micro-v1:0" in capsys.readouterr().out


def test_prompts_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompts"]) == 0
    out = capsys.readouterr().out
    assert "== adherence (catalog default)" in out and "== llm_judge (catalog default)" in out
    assert "== derive (catalog default)\nYou turn a voice agent's prompt into a checklist" in out


def test_prompts_show_overrides_and_their_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(
        tmp_path,
        "aux:\n  stack: openai\n  logic_slm:\n    config:\n"
        "      prompt_overrides: {adherence: Check my steps.}\n",
    )
    assert main(["prompts", str(folder), "--scope", "adherence"]) == 0
    out = capsys.readouterr().out
    assert "== adherence (stage overlay (config.aux.logic_slm))\nCheck my steps." in out
    assert "extraction" not in out


def test_prompts_bad_overlay_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = agent(tmp_path, "aux:\n  stack: openai\n  logic_slm:\n    config: {modle: x}\n")
    assert main(["prompts", str(folder)]) == 2
    assert "config.aux.logic_slm:config.modle" in capsys.readouterr().err
