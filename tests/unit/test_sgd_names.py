"""The SGD replay reads a schema's names as names: renaming them changes none of its figures.

A split it was not built on may name its services, intents and slots anything; the replay's
figures must come from the dialogues' structure, never from words its names happen to share with
the utterances. The fixture (tests/fixtures/sgd, CC BY-SA 4.0, see its NOTICE.md) is renamed
consistently: every service, every intent of a service and every slot of a service gets a
drawn identifier of its own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from pipecat_steward.replay import Replayer, parse_dialogue
from pipecat_steward.replay.sgd_data import read_json
from pipecat_steward.replay.sgd_replay import replay_split

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sgd"
RAW_SCHEMA: list[dict[str, Any]] = read_json(FIXTURE / "schema.json")
RAW_DIALOGUES: list[dict[str, Any]] = read_json(FIXTURE / "dialogues_001.json")
TIMINGS = ("seconds", "per_second", "ratio")

Rename = Callable[[str, str], str]
"""(namespace, old name) → new name; a namespace is "service", or "<kind>:<service>"."""


def _names() -> st.SearchStrategy[dict[tuple[str, str], str]]:
    """A distinct identifier for every name of the fixture, within its namespace.

    Each is made of one to three words joined as SGD joins them (``ReserveHotel``,
    ``Hotels_4``), every word a letter, more letters, and a digit: no word of any language, and
    none the engine reads as a filler or a yes. A name whose words are only one letter or only
    fillers ("A", "Um_Ok") names nothing to the engine (a one-letter word never does), which is
    no SGD name.
    """
    keys = sorted(
        {("service", s["service_name"]) for s in RAW_SCHEMA}
        | {(f"slot:{s['service_name']}", x["name"]) for s in RAW_SCHEMA for x in s["slots"]}
        | {(f"intent:{s['service_name']}", i["name"]) for s in RAW_SCHEMA for i in s["intents"]}
    )
    word = r"[A-Z][a-z]{1,5}[0-9]"
    ident = st.from_regex(rf"{word}((_)?{word}){{0,2}}", fullmatch=True)
    drawn = st.lists(ident, min_size=len(keys), max_size=len(keys), unique_by=str.lower)
    return drawn.map(lambda new: dict(zip(keys, new, strict=True)))


def _schema(rename: Rename) -> list[dict[str, Any]]:
    schema = copy.deepcopy(RAW_SCHEMA)
    for service in schema:
        name = service["service_name"]
        service["service_name"] = rename("service", name)
        for s in service["slots"]:
            s["name"] = rename(f"slot:{name}", s["name"])
        for i in service["intents"]:
            _intent(i, name, rename)
    return schema


def _intent(intent: dict[str, Any], service: str, rename: Rename) -> None:
    def slot(x: str) -> str:
        return rename(f"slot:{service}", x)

    intent["name"] = rename(f"intent:{service}", intent["name"])
    intent["required_slots"] = [slot(x) for x in intent["required_slots"]]
    intent["optional_slots"] = {slot(k): v for k, v in intent["optional_slots"].items()}
    intent["result_slots"] = [slot(x) for x in intent.get("result_slots", [])]


def _frame(frame: dict[str, Any], rename: Rename) -> None:
    service = frame["service"]
    frame["service"] = rename("service", service)

    def slot(x: str) -> str:
        return rename(f"slot:{service}", x)

    def intent(x: str) -> str:
        return x if x == "NONE" else rename(f"intent:{service}", x)

    for act in frame.get("actions", []):
        if act.get("slot") == "intent":  # the act's values are intents
            act["values"] = [intent(v) for v in act["values"]]
            act["canonical_values"] = [intent(v) for v in act.get("canonical_values", [])]
        elif act.get("slot"):
            act["slot"] = slot(act["slot"])
    for span in frame.get("slots", []):
        span["slot"] = slot(span["slot"])
    if "state" in frame:
        state = frame["state"]
        state["active_intent"] = intent(state["active_intent"])
        state["requested_slots"] = [slot(x) for x in state["requested_slots"]]
        state["slot_values"] = {slot(k): v for k, v in state["slot_values"].items()}
    if "service_call" in frame:
        call = frame["service_call"]
        call["method"] = intent(call["method"])
        call["parameters"] = {slot(k): v for k, v in call["parameters"].items()}
    if "service_results" in frame:
        frame["service_results"] = [
            {slot(k): v for k, v in r.items()} for r in frame["service_results"]
        ]


def _dialogues(rename: Rename) -> list[dict[str, Any]]:
    dialogues = copy.deepcopy(RAW_DIALOGUES)
    for dialogue in dialogues:
        dialogue["services"] = [rename("service", s) for s in dialogue["services"]]
        for turn in dialogue["turns"]:
            for frame in turn["frames"]:
                _frame(frame, rename)
    return dialogues


def _untimed(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if not any(t in k for t in TIMINGS)}


def _figures(rename: Rename) -> dict[str, Any]:
    schema = {s["service_name"]: s for s in _schema(rename)}
    replayer = Replayer(schema)
    for raw in _dialogues(rename):
        replayer.replay(parse_dialogue(raw))
    return _untimed(replayer.metrics.report())


def _same(_namespace: str, name: str) -> str:
    return name


BASELINE = _untimed(replay_split(FIXTURE))
"""The fixture's figures as the replay reads the folder itself."""


def test_the_renaming_itself_changes_nothing_when_it_keeps_each_name() -> None:
    # The test's own copy of the split, renamed to the same names, is the folder as read.
    assert json.dumps(_figures(_same), sort_keys=True) == json.dumps(BASELINE, sort_keys=True)
    assert BASELINE["dialogues"] == len(RAW_DIALOGUES)


@given(_names())
@settings(max_examples=50, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
def test_renaming_every_service_intent_and_slot_changes_no_figure(
    names: dict[tuple[str, str], str],
) -> None:
    # A name the schema does not declare (an act's ``count``) is no schema name: it stays.
    figures = _figures(lambda namespace, name: names.get((namespace, name), name))
    assert json.dumps(figures, sort_keys=True) == json.dumps(BASELINE, sort_keys=True)
