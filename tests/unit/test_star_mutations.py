"""Any damage to a STAR folder ends in a report or in ``StarFormatError``, never in another error.

Hypothesis damages a small folder in STAR's format (a task with a branching flowchart, its API
schema and two dialogues) at one to three places: a key removed, or a value replaced by
another JSON value. The replay must finish with a report or stop with ``StarFormatError``.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from tests.damage_support import damaged

from pipecat_steward.replay.star_data import StarFormatError
from pipecat_steward.replay.star_replay import replay_star

CHART = {
    "task": "desk",
    "graph": {
        "hello": "ask_name",
        "ask_name": "query_check",
        "available": "query_book",
        "unavailable": "anything_else",
        "query_book": "anything_else",
    },
    "replies": {
        "ask_name": "What is your name?",
        "query_check": "Let me check.",
        "available": "It is free.",
        "unavailable": "It is taken.",
        "query_book": "Booked.",
        "anything_else": "Anything else?",
    },
}
API = {
    "function": "desk",
    "input": [{"Name": "Name", "Type": "String"}],
    "required": ["Name"],
    "output": [{"Name": "Available", "Type": "Boolean"}],
}


def _events(name: str) -> list[dict[str, Any]]:
    return [
        {"Agent": "User", "Action": "utter", "Text": "Hi"},
        {"Agent": "Wizard", "Action": "pick_suggestion", "ActionLabel": "hello"},
        {"Agent": "Wizard", "Action": "pick_suggestion", "ActionLabel": "ask_name"},
        {"Agent": "User", "Action": "utter", "Text": f"I am {name}"},
        {
            "Agent": "Wizard",
            "Action": "query",
            "APIName": "desk",
            "Constraints": [{"Name": f'"{name}"'}],
        },
        {
            "Agent": "KnowledgeBase",
            "Action": "return_item",
            "APIName": "desk",
            "Item": {"Available": True},
        },
        {"Agent": "Wizard", "Action": "pick_suggestion", "ActionLabel": "available"},
    ]


DIALOGUES = [
    {
        "DialogueID": n,
        "Scenario": {"Happy": n == 1, "WizardCapabilities": [{"Task": "desk"}]},
        "Events": _events(name),
    }
    for n, name in ((1, "Ada"), (2, "Bob"))
]

NAMES = ["desk", "hello", "ask_name", "query_book", "Name", "Available", "User", "Wizard"]
"""Names the damage puts in: labels, fields and agents the folder uses."""
PARTS = {"chart": CHART, "api": API, "dialogues": DIALOGUES}


def _write(root: Path, folder: dict[str, Any]) -> None:
    (root / "tasks").mkdir()
    (root / "apis").mkdir()
    (root / "tasks" / "desk.json").write_text(json.dumps(folder["chart"]), encoding="utf-8")
    (root / "apis" / "desk.json").write_text(json.dumps(folder["api"]), encoding="utf-8")
    with gzip.open(root / "dialogues_001.jsonl.gz", "wt", encoding="utf-8") as handle:
        for dialogue in folder["dialogues"]:
            handle.write(json.dumps(dialogue) + "\n")


def test_the_undamaged_folder_replays() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), {"chart": CHART, "api": API, "dialogues": DIALOGUES})
        assert replay_star(tmp)["dialogues"] == 2


@given(damaged(PARTS, NAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_folder_reports_or_names_its_damage(folder: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _write(Path(tmp), folder)
        try:
            report = replay_star(tmp)
        except StarFormatError as exc:
            assert str(exc).startswith(tmp), exc
            return
    assert isinstance(report["dialogues"], int)
