"""A fuzzer of the SGD replay: generated schemas and dialogues in SGD's format must replay.

Only the dev split is here, but the replay will meet train, test and the SGD-X schema variants:
services, names, values and dialogue shapes dev never shows. Hypothesis writes schemas and
dialogues in SGD's format (the dataset's README and the dev files are the spec: USER turns with
one frame per service, two only where the service changes, each with a cumulative state; SYSTEM
turns with one frame of a service the caller just spoke about, an optional service call) with
unusual names and values, and checks that the replay never raises and that its report stays
well formed: ratios in [0, 1], counts that add up, and the same report on a second run.

``_Writer`` keeps SGD's invariants: state slots are required or optional slots of an intent of
the frame's service, a categorical value is one of its possible values or ``dontcare``, a
value enters the state by an INFORM, by accepting what the system offered or by carrying over
from another service, a list gains a spoken variant the system restated, and values are only
dropped when a new intent instance of the service starts. The ``loose`` shapes (a frame of a
service missing from ``services`` or a listed service without frames, a call of another
service's intent, a system frame of a service the caller never spoke about, a dialogue ending
on a USER turn) break the README's rules or never occur in dev, and are fuzzed apart: the
replay must survive them too, but their metrics need not mean anything.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.sgd_support.dialogues import (
    USER_TURNS,
    Draw,
    Raw,
    dialogues,
    schemas,
    sgd_action,
)
from tests.sgd_support.sgd_format import check_sgd_format

from pipecat_steward.replay import KEYS, Replayer, load_schema, parse_dialogue
from pipecat_steward.replay.sgd_data import NO_INTENT
from pipecat_steward.replay.sgd_flow import replay_names
from pipecat_steward.replay.sgd_replay import replay_split

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sgd"

RATIOS = (
    "joint_state_accuracy",
    "completion_agreement",
    "service_call_agreement",
    "call_turn_agreement",
    "call_argument_agreement",
)
COUNTS = (
    "dialogues",
    "user_turns",
    "corrections",
    "active_intent_frames",
    "service_calls",
    "intent_switches",
    "rejected_calls",
    "multi_valued_lists",
    "fresh_frames",
)
TIMINGS = ("seconds", "parse_seconds", "user_turns_per_second", "replay_to_parse_ratio")

# --- checks --------------------------------------------------------------------------------


def _replay(schema: Mapping[str, Raw], *raws: Raw) -> Replayer:
    replayer = Replayer(schema)
    for raw in raws:
        replayer.replay(parse_dialogue(raw))
    return replayer


def _user_frames(raw: Raw) -> list[Raw]:
    return [f for t in raw["turns"] if t["speaker"] == "USER" for f in t["frames"]]


def _expected_counts(*raws: Raw) -> dict[str, int]:
    """The counts a report must give for ``raws``, read off the raw dialogues."""
    turns = [t for raw in raws for t in raw["turns"]]
    frames = [f for raw in raws for f in _user_frames(raw)]
    return {
        "dialogues": len(raws),
        "user_turns": sum(t["speaker"] == "USER" for t in turns),
        "active_intent_frames": sum(f["state"]["active_intent"] != NO_INTENT for f in frames),
        "service_calls": sum("service_call" in f for t in turns for f in t["frames"]),
    }


def _check_report(report: Mapping[str, Any], *raws: Raw) -> None:
    """The report is JSON-safe, its ratios are in [0, 1] and its counts add up."""
    json.dumps(report, allow_nan=False)
    assert set(KEYS) <= set(report)
    for key in RATIOS:
        assert isinstance(report[key], float) and 0.0 <= report[key] <= 1.0, (key, report[key])
    for key in COUNTS:
        assert isinstance(report[key], int) and report[key] >= 0, (key, report[key])
    assert {k: report[k] for k in _expected_counts(*raws)} == _expected_counts(*raws)
    frames = sum(len(_user_frames(raw)) for raw in raws)
    assert report["fresh_frames"] <= frames
    lists = sum(len(f["state"]["slot_values"]) for raw in raws for f in _user_frames(raw))
    assert report["multi_valued_lists"] <= lists
    ids = {str(raw["dialogue_id"]) for raw in raws}
    for kind, entry in report["mismatches"].items():
        assert isinstance(entry["count"], int) and entry["count"] > 0, kind
        assert entry["example"] in ids, kind


def _check_tallies(replayer: Replayer) -> None:
    """Every frame or call the metrics did not count as a match is one mismatch of its measure."""
    m = replayer.metrics
    missed = Counter[str]()
    for kind, n in m.mismatches.items():
        missed[kind.split(":")[0]] += n
    orphans = missed["call_without_session"]
    assert m.state_frames - m.state_matches == (
        missed["state_slots_differ"] + missed["state_value_differs"]
    )
    assert m.state_frames - m.completion_matches == (
        missed["completion_engine_early"] + missed["completion_engine_late"]
    )
    assert m.calls - m.call_matches == missed["call_task_not_fired"] + orphans
    assert m.calls - m.call_turn_matches == missed["call_fired_earlier"] + orphans
    argument_misses = sum(n for kind, n in missed.items() if kind.startswith("args_"))
    assert m.calls - m.argument_matches == argument_misses + orphans
    assert m.rejected_calls == sum(
        n for kind, n in m.mismatches.items() if kind.startswith(("call_error:", "call_refused:"))
    )


def _stable(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report without its timings (the only part two runs may differ in)."""
    return {k: v for k, v in report.items() if k not in TIMINGS}


@st.composite
def _schema_and_dialogue(
    draw: Draw[Any], user_turns: st.SearchStrategy[int] = USER_TURNS, loose: bool = False
) -> tuple[dict[str, Raw], Raw]:
    schema = draw(schemas())
    return schema, draw(dialogues(schema, user_turns, loose))


# --- the fuzzers ---------------------------------------------------------------------------


@given(_schema_and_dialogue())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_valid_dialogue_replays_to_a_well_formed_and_repeatable_report(
    case: tuple[dict[str, Raw], Raw],
) -> None:
    schema, raw = case
    check_sgd_format(schema, raw)
    first = _replay(schema, raw)
    report = first.metrics.report()
    _check_report(report, raw)
    _check_tallies(first)
    assert _stable(_replay(schema, raw).metrics.report()) == _stable(report)


@given(_schema_and_dialogue(user_turns=st.integers(40, 120)))
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_a_very_long_dialogue_replays(case: tuple[dict[str, Raw], Raw]) -> None:
    schema, raw = case
    replayer = _replay(schema, raw)
    _check_report(replayer.metrics.report(), raw)
    _check_tallies(replayer)


@given(_schema_and_dialogue(loose=True))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_shapes_beyond_the_readme_replay_without_raising(case: tuple[dict[str, Raw], Raw]) -> None:
    schema, raw = case
    replayer = _replay(schema, raw)
    _check_report(replayer.metrics.report(), raw)
    _check_tallies(replayer)


@st.composite
def _split(draw: Draw[Any]) -> tuple[dict[str, Raw], list[Raw]]:
    schema = draw(schemas())
    raws = draw(st.lists(dialogues(schema, st.integers(1, 5)), min_size=1, max_size=3))
    return schema, raws


@given(_split())
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_split_on_disk_reports_the_sum_of_its_dialogues(
    case: tuple[dict[str, Raw], list[Raw]],
) -> None:
    schema, raws = case
    with tempfile.TemporaryDirectory() as folder:
        split = Path(folder)
        (split / "schema.json").write_text(json.dumps(list(schema.values())), encoding="utf-8")
        (split / "dialogues_001.json").write_text(json.dumps(raws), encoding="utf-8")
        report = replay_split(split)
    _check_report(report, *raws)
    # No state leaks from one dialogue into the next: the split is the sum of its dialogues.
    alone = [_replay(schema, raw).metrics for raw in raws]
    together = _replay(schema, *raws).metrics
    for name in ("state_matches", "completion_matches", "call_matches", "call_turn_matches"):
        assert getattr(together, name) == sum(getattr(m, name) for m in alone), name
    assert together.mismatches == sum((m.mismatches for m in alone), Counter[str]())
    assert _stable(together.report()) == _stable(report)


def test_the_format_check_accepts_the_real_fixture_dialogues() -> None:
    # The check encodes SGD's format as the dev files have it, not only as the writer writes it.
    for raw in json.loads((FIXTURE / "dialogues_001.json").read_text(encoding="utf-8")):
        check_sgd_format(load_schema(FIXTURE), raw)


# --- regressions the fuzzer found ----------------------------------------------------------


def _city_service(service: str, *intents: str) -> dict[str, Raw]:
    """A one-slot schema: every intent of ``service`` searches by ``city``."""
    slot = {"name": "city", "description": "", "is_categorical": False, "possible_values": []}
    return {
        service: {
            "service_name": service,
            "description": "",
            "slots": [slot],
            "intents": [
                {
                    "name": name,
                    "description": "",
                    "is_transactional": False,
                    "required_slots": ["city"],
                    "optional_slots": {},
                    "result_slots": [],
                }
                for name in intents
            ],
        }
    }


def _asked_and_called(service: str, intent: str, city: str = "Paris") -> Raw:
    """The caller asks ``intent`` in ``city``; the system calls it right away."""
    inform = sgd_action("INFORM", "city", [city])
    state = {"active_intent": intent, "requested_slots": [], "slot_values": {"city": [city]}}
    user = {"service": service, "actions": [inform], "slots": [], "state": state}
    call = {"method": intent, "parameters": {"city": city}}
    system = {"service": service, "actions": [], "slots": [], "service_call": call}
    return {
        "dialogue_id": "regression",
        "services": [service],
        "turns": [
            {"speaker": "USER", "utterance": city, "frames": [user]},
            {
                "speaker": "SYSTEM",
                "utterance": "Found it.",
                "frames": [{**system, "service_results": []}],
            },
        ],
    }


@pytest.mark.parametrize(
    ("service", "intent"),
    [
        ("Toy_1", "CorrectSlot"),  # its natural tool is the engine's correct_slot
        ("Toy_1", "ConfirmPending"),
        ("Toy_1", "RejectPending"),
        ("Toy_1", "DeclineSlot"),
        ("Toy_1", "SetToy_1"),  # its natural tool is the service's setter, set_toy_1
    ],
)
def test_an_intent_whose_tool_name_is_taken_replays_with_another_tool(
    service: str, intent: str
) -> None:
    # Compiling the service raised ConfigError ("'correct_slot' is a steward tool", "'set_toy_1'
    # clashes with a task or steward tool"): tool names came from the names alone.
    schema = _city_service(service, intent)
    replayer = _replay(schema, _asked_and_called(service, intent))
    report = replayer.metrics.report()
    assert report["service_call_agreement"] == report["call_turn_agreement"] == 1.0
    assert report["call_argument_agreement"] == report["joint_state_accuracy"] == 1.0
    assert report["mismatches"] == {}


def test_two_intents_with_one_natural_tool_name_get_a_tool_each() -> None:
    names = replay_names(_city_service("Toy_1", "FindThing", "Find_thing")["Toy_1"])
    assert names.tools["FindThing"] == "find_thing" != names.tools["Find_thing"]
    assert names.setter == "set_toy_1"


def test_a_caller_changing_a_value_in_words_with_a_superscript_digit() -> None:
    # correct_slot checks whether the words name the new value: "²" passes ``isdigit`` but is
    # no number, and the engine's word matching once raised on it.
    schema = _city_service("Toy_1", "FindThing")
    raw = _asked_and_called("Toy_1", "FindThing")
    second = _asked_and_called("Toy_1", "FindThing", city="London")["turns"]
    second[0]["utterance"] = "London ²"
    raw["turns"] += second
    report = _replay(schema, raw).metrics.report()
    assert report["joint_state_accuracy"] == report["service_call_agreement"] == 1.0
