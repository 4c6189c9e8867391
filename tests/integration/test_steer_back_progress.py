"""Steer-back counts only real drift: a conversation that makes progress on every turn after
the greeting never sees a steer-back directive, on the real pipeline or the direct driver. At
the hard tier the LLM runs with the firm directive; when it only chats, code asks the open
question itself right after the LLM's words, on every path."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import check_expectations, load_scenario
from pipecat_steward.testing.simulate import run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
PROGRESSING = ["happy_path", "long_yes_at_the_final_readback"]


def _steer_backs(traces: list[dict[str, Any]]) -> list[tuple[str, str]]:
    hints = [(t["user"], h["tag"]) for t in traces for h in t["hints"]]
    events = [(t["user"], e["tag"]) for t in traces for e in t["events"]]
    return [(u, tag) for u, tag in hints + events if tag.startswith("steer_back")]


@pytest.mark.parametrize("name", PROGRESSING)
async def test_no_steer_back_while_the_caller_makes_progress(name: str) -> None:
    path = BELLA / "scenarios" / f"{name}.yaml"
    piped = await run_scenario(BELLA, load_scenario(path))
    direct = await run_scenario_direct(BELLA, load_scenario(path))
    assert _steer_backs(piped) == []
    assert _steer_backs(direct) == []


PATHS = {"pipeline": run_scenario, "direct": run_scenario_direct, "s2s": run_scenario_s2s}


@pytest.mark.parametrize("path", PATHS)
async def test_code_asks_the_question_after_the_llm_only_chats_at_the_hard_tier(path: str) -> None:
    scenario = BELLA / "scenarios" / "chat_at_the_hard_steer_back.yaml"
    traces = await PATHS[path](BELLA, load_scenario(scenario))
    hard = next(t for t in traces if any(e["tag"] == "steer_back_hard" for e in t["events"]))
    said = [(u["source"], u["text"]) for u in hard["bot"]]
    assert said == [("llm", "Verdi, without a doubt."), ("preempt", "How many guests will be dining?")]
    for trace, turn in zip(traces, load_scenario(scenario).turns, strict=True):
        assert check_expectations(trace, turn.checks) == []


@pytest.mark.parametrize("path", PATHS)
async def test_an_answer_at_the_hard_tier_is_taken_and_not_asked_again(path: str) -> None:
    scenario = BELLA / "scenarios" / "answer_at_the_hard_steer_back.yaml"
    traces = await PATHS[path](BELLA, load_scenario(scenario))
    hard = next(t for t in traces if any(e["tag"] == "steer_back_hard" for e in t["events"]))
    assert [u["source"] for u in hard["bot"]] == ["llm"]
    assert "How many guests" not in " ".join(u["text"] for u in hard["bot"])
