"""Confirmations, replies and steer-back at the edges, on every path: the real cascaded
pipeline, the direct driver and the speech-to-speech steward agree and meet the scenarios'
expectations (a yes that carries a value is never confirmed by code; a long yes confirms and
the turn replies; an answer is never dropped by steer-back; a status-only then_say is followed
by the question in the same reply)."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.simulate import check_expectations, load_scenario, run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

BOTS = Path(__file__).resolve().parents[2] / "bots"
BELLA = BOTS / "bella_notte"
EDGE_SCENARIOS = [
    "yes_with_a_value",
    "long_yes_at_the_final_readback",
    "yes_and_more_by_the_llm",
    "answer_after_side_questions",
    "answer_at_the_hard_steer_back",
]
KEYS = ("llm_calls", "fired", "bot", "phase", "asks", "slots", "status")


def _view(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: t[k] for k in KEYS} for t in traces]


def _problems(traces: list[dict[str, Any]], path: Path) -> list[str]:
    scenario = load_scenario(path)
    return [
        f"turn {t['turn']} ({t['user']!r}): {p}"
        for t, turn in zip(traces, scenario.turns, strict=True)
        for p in check_expectations(t, turn.checks)
    ]


@pytest.mark.parametrize("name", EDGE_SCENARIOS)
async def test_speech_to_speech_meets_the_same_expectations(name: str) -> None:
    path = BELLA / "scenarios" / f"{name}.yaml"
    s2s = await run_scenario_s2s(BELLA, load_scenario(path))
    assert _problems(s2s, path) == []
    cascaded = await run_scenario(BELLA, load_scenario(path))
    assert [t["fired"] for t in s2s] == [t["fired"] for t in cascaded]
    assert [t["slots"] for t in s2s] == [t["slots"] for t in cascaded]


STATUS_ONLY = "Good news, we have openings."
NEXT_QUESTION = "We have 18:00, 19:30, 21:00. Which time works best?"
THEN_SAY_SCENARIO = """
name: status_only_then_say
turns:
  - user: "Hi"
  - user: "A table for 4 on July 17th, please"
    llm:
      - calls: [{name: set_reservation_basics, args: {party_size: 4, preferred_date: "2026-07-17"}}]
  - user: "Yes"
    expect:
      fired: [confirm_pending, find_available_times]
      bot: ["Good news, we have openings.", "Which time works best?"]
      bot_source: [preempt]
      asks: [selected_time]
"""


@pytest.fixture
def status_only_bella(tmp_path: Path) -> Path:
    """Bella with a then_say that only reports ("Good news, we have openings.")."""
    agent = tmp_path / "bella_status_only"
    shutil.copytree(BELLA, agent)
    config = yaml.safe_load((agent / "agent.yaml").read_text(encoding="utf-8"))
    task = next(t for t in config["flow"]["tasks"] if t["name"] == "FindAvailableTimes")
    task["then_say"] = STATUS_ONLY
    (agent / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (agent / "scenarios" / "status_only_then_say.yaml").write_text(
        THEN_SAY_SCENARIO, encoding="utf-8"
    )
    return agent


async def test_a_status_only_then_say_is_followed_by_the_question(status_only_bella: Path) -> None:
    path = status_only_bella / "scenarios" / "status_only_then_say.yaml"
    piped = await run_scenario(status_only_bella, load_scenario(path))
    direct = await run_scenario_direct(status_only_bella, load_scenario(path))
    s2s = await run_scenario_s2s(status_only_bella, load_scenario(path))
    for traces in (piped, direct, s2s):
        assert _problems(traces, path) == []
        said = " ".join(b["text"] for b in traces[-1]["bot"])
        assert said.startswith(STATUS_ONLY) and said.endswith(NEXT_QUESTION.split(". ")[-1])
    assert _view(direct) == _view(piped)


SUMMARY = (
    "Before I go ahead: 4 guests, July 17th, 7:30 PM, under the name Chen, no special requests. "
    "Shall I go ahead?"
)
CONFIRM_BEFORE_SCENARIO = f"""
name: confirm_before_booking
turns:
  - user: "Hi"
  - user: "A table for 4 on July 17th, please"
    llm:
      - calls: [{{name: set_reservation_basics, args: {{party_size: 4, preferred_date: "2026-07-17"}}}}]
  - user: "Yes"
  - user: "7:30 please"
    llm:
      - calls: [{{name: set_selected_time, args: {{time: "19:30"}}}}]
  - user: "Yes"
  - user: "Chen"
    llm:
      - calls: [{{name: set_guest_info, args: {{guest_name: Chen}}}}]
  - user: "No, nothing special"
    llm:
      - calls: [{{name: set_guest_info, args: {{special_requests: none}}}}]
  - user: "Yes"
    expect:
      fired: [confirm_pending]
      bot: ["we hold tables for 15 minutes", "{SUMMARY}"]
      phase: readback
      status: in_progress
  - user: "Yes, for 6 of us"
    expect:
      fired: []
      llm_calls: []
      phase: readback
      slots: {{party_size: {{status: pending, value: 4}}}}
  - user: "Yes, go ahead, thank you"
    expect:
      fired: [confirm_pending, book_reservation]
      bot: ["Your table is booked!"]
      status: complete
"""


@pytest.fixture
def confirm_before_bella(tmp_path: Path) -> Path:
    """Bella whose terminal booking is confirmed as a whole first."""
    agent = tmp_path / "bella_confirm_before"
    shutil.copytree(BELLA, agent)
    config = yaml.safe_load((agent / "agent.yaml").read_text(encoding="utf-8"))
    task = next(t for t in config["flow"]["tasks"] if t["name"] == "BookReservation")
    task["confirm_before"] = True
    (agent / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    scenario = agent / "scenarios" / "confirm_before_booking.yaml"
    scenario.write_text(CONFIRM_BEFORE_SCENARIO, encoding="utf-8")
    return agent


async def test_confirm_before_reads_the_whole_booking_back_on_every_path(
    confirm_before_bella: Path,
) -> None:
    path = confirm_before_bella / "scenarios" / "confirm_before_booking.yaml"
    piped = await run_scenario(confirm_before_bella, load_scenario(path))
    direct = await run_scenario_direct(confirm_before_bella, load_scenario(path))
    s2s = await run_scenario_s2s(confirm_before_bella, load_scenario(path))
    for traces in (piped, direct, s2s):
        assert _problems(traces, path) == []
    assert _view(direct) == _view(piped)
    booked = [f["args"] for t in piped for f in t["fired"] if f["tool"] == "book_reservation"]
    assert len(booked) == 1 and booked[0]["party_size"] == 4


NOTICE = "Please arrive on time; we hold tables for 15 minutes."
NOTICE_SCENARIO = f"""
name: announce_after_confirmation
turns:
  - user: "Hi"
  - user: "A table for 4 on July 17th, please"
    llm:
      - calls: [{{name: set_reservation_basics, args: {{party_size: 4, preferred_date: "2026-07-17"}}}}]
  - user: "Yes"
  - user: "7:30 please"
    llm:
      - calls: [{{name: set_selected_time, args: {{time: "19:30"}}}}]
  - user: "Yes, that's right, thank you so much"
    expect:
      fired: [confirm_pending]
      bot: ["{NOTICE}", "What name should I put the reservation under?"]
      asks: [guest_name]
"""


async def test_an_announce_due_after_a_confirmation_is_spoken(tmp_path: Path) -> None:
    agent = tmp_path / "bella_notice"
    shutil.copytree(BELLA, agent)
    config = yaml.safe_load((agent / "agent.yaml").read_text(encoding="utf-8"))
    slots = config["flow"]["slots"]
    at = next(i for i, s in enumerate(slots) if s["name"] == "guest_name")
    slots.insert(
        at,
        {"name": "notice", "source": "announce", "requires": ["selected_time"], "message": NOTICE},
    )
    (agent / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    path = agent / "scenarios" / "announce_after_confirmation.yaml"
    path.write_text(NOTICE_SCENARIO, encoding="utf-8")
    piped = await run_scenario(agent, load_scenario(path))
    direct = await run_scenario_direct(agent, load_scenario(path))
    s2s = await run_scenario_s2s(agent, load_scenario(path))
    for traces in (piped, direct, s2s):
        assert _problems(traces, path) == []
    assert _view(direct) == _view(piped)
