"""The SGD replay: schema → flow builder, dialogue replay, metrics and the script's output.

The fixture (tests/fixtures/sgd, CC BY-SA 4.0, see its NOTICE.md) holds seven dev dialogues; the
expected counts below were checked by reading each dialogue's gold turns (docs/sgd.md explains
the mismatch classes).
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import compile_flow
from pipecat_steward.replay import KEYS, Replayer, build_flow_config, load_dialogues, load_schema
from pipecat_steward.replay.sgd_data import parse_dialogue
from pipecat_steward.replay.sgd_flow import replay_names, tool_name
from pipecat_steward.replay.sgd_replay import replay_split

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "sgd"
SCHEMA = load_schema(FIXTURE)
DIALOGUES = {d.dialogue_id: d for d in load_dialogues(FIXTURE)}


# dialogue id → (corrections, intent switches, gold calls, mismatch counts)
EXPECTED: dict[str, tuple[int, int, int, dict[str, int]]] = {
    # FindRestaurants with everything in the first turns: the engine fires with the gold call.
    "1_00030": (0, 0, 1, {}),
    # ReserveRestaurant has name, city and time at turn 4, the caller says 1 person, SGD
    # confirms and the caller affirms at turn 8: the engine fires then, with 1 seat.
    "1_00003": (0, 0, 1, {}),
    # City and restaurant corrected at turn 4 (2 corrections); the confirmation of turn 6 fires it.
    "1_00006": (2, 0, 1, {}),
    # Flight search: Economy added at turn 6 and SGD searches again, so does the engine (a
    # search re-runs on a new constraint); the destination correction at turn 10 re-fires it.
    "1_00031": (1, 0, 3, {}),
    # Flight search: United Airlines added at turn 10; both search again with it.
    "1_00032": (0, 0, 2, {}),
    # Two services: Fresno → Long Beach corrected, FindBus → BuyBusTicket (fired on the
    # caller's confirmation), then Hotels_4 SearchHotel in a two-frame turn.
    "8_00059": (1, 1, 3, {}),
    # FindApartment → ScheduleVisit, then Restaurants_2 FindRestaurants (price_range dontcare is
    # omitted from the gold call) → ReserveRestaurant: two confirmed transactions.
    "19_00082": (0, 2, 4, {}),
}


@pytest.mark.parametrize("service", sorted(SCHEMA))
def test_builder_output_compiles_for_every_fixture_service(service: str) -> None:
    schema = SCHEMA[service]
    flow = compile_flow(build_flow_config(schema))
    for intent in schema["intents"]:
        task = flow.task[intent["name"]].config
        confirm = {f"confirmed_{tool_name(intent['name'])}"} if intent["is_transactional"] else set()
        assert set(task.requires) == {"intent", *intent["required_slots"], *confirm}
        assert set(task.inputs) == {*intent["required_slots"], *intent["optional_slots"]}
        assert not task.terminal
    assert all(not s.config.required and not s.config.requires_readback for s in flow.slots)
    assert {s["name"] for s in schema["slots"]} <= set(flow.slot)


@pytest.mark.parametrize("dialogue_id", sorted(EXPECTED))
def test_fixture_dialogue_replays_as_read_by_hand(dialogue_id: str) -> None:
    corrections, switches, calls, mismatches = EXPECTED[dialogue_id]
    replayer = Replayer(SCHEMA)
    replayer.replay(DIALOGUES[dialogue_id])
    m = replayer.metrics
    assert m.state_matches == m.state_frames > 0, "engine state equals the gold state every turn"
    assert m.completion_matches == m.state_frames
    assert m.call_matches == m.calls == calls
    assert (m.corrections, m.intent_switches, m.rejected_calls) == (corrections, switches, 0)
    assert dict(m.mismatches) == mismatches


def test_fixture_split_totals_are_the_sum_of_the_dialogues() -> None:
    report = replay_split(FIXTURE)
    assert report["dialogues"] == 7
    assert report["user_turns"] == sum(len(d.turns) for d in DIALOGUES.values()) == 47
    assert report["joint_state_accuracy"] == report["completion_agreement"] == 1.0
    assert report["service_call_agreement"] == 1.0
    assert report["corrections"] == 4 and report["intent_switches"] == 3
    assert report["service_calls"] == 15
    # Every call is made on the gold turn with the gold arguments.
    assert report["call_argument_agreement"] == report["call_turn_agreement"] == 1.0


def _frame(intent: str, values: dict[str, str]) -> dict[str, Any]:
    actions = [
        {"act": "INFORM", "slot": k, "values": [v], "canonical_values": [v]}
        for k, v in values.items()
    ]
    state = {
        "active_intent": intent,
        "requested_slots": [],
        "slot_values": {k: [v] for k, v in values.items()},
    }
    return {"service": "Toy_1", "actions": actions, "slots": [], "state": state}


def _system(call: dict[str, str] | None = None, method: str = "FindThing") -> dict[str, Any]:
    frame: dict[str, Any] = {"service": "Toy_1", "actions": [], "slots": []}
    if call is not None:
        frame["service_call"] = {"method": method, "parameters": call}
    return {"speaker": "SYSTEM", "utterance": "…", "frames": [frame]}


TOY_SCHEMA = {
    "service_name": "Toy_1",
    "description": "A hand-made service",
    "slots": [
        {"name": n, "description": n, "is_categorical": False, "possible_values": []}
        for n in ("city", "count")
    ],
    "intents": [
        {
            "name": "FindThing",
            "description": "",
            "is_transactional": False,
            "required_slots": ["city"],
            "optional_slots": {"count": "1"},
            "result_slots": [],
        }
    ],
}


def _two_turns(second_call: dict[str, str]) -> dict[str, Any]:
    return {
        "dialogue_id": "toy_1",
        "services": ["Toy_1"],
        "turns": [
            {
                "speaker": "USER",
                "utterance": "Find one in Paris",
                "frames": [_frame("FindThing", {"city": "Paris"})],
            },
            _system(),
            {
                "speaker": "USER",
                "utterance": "Actually London",
                "frames": [_frame("FindThing", {"city": "London"})],
            },
            _system(second_call),
        ],
    }


def test_hand_made_dialogue_correction_refires_the_task_for_the_service_call() -> None:
    replayer = Replayer({"Toy_1": TOY_SCHEMA})
    replayer.replay(parse_dialogue(_two_turns({"city": "London"})))
    report = replayer.metrics.report()
    assert report["corrections"] == 1
    assert report["joint_state_accuracy"] == report["completion_agreement"] == 1.0
    # The task fired at turn 1 on Paris, the correction re-fired it at turn 2 on London (with
    # the default count), which is the gold call of the system turn after turn 2.
    assert report["service_call_agreement"] == report["call_argument_agreement"] == 1.0
    assert report["call_turn_agreement"] == 1.0
    assert report["mismatches"] == {}


def test_hand_made_dialogue_detects_wrong_call_arguments() -> None:
    replayer = Replayer({"Toy_1": TOY_SCHEMA})
    replayer.replay(parse_dialogue(_two_turns({"city": "London", "count": "3"})))
    report = replayer.metrics.report()
    assert report["service_call_agreement"] == 1.0 and report["call_argument_agreement"] == 0.0
    assert report["mismatches"] == {
        "args_optional_filled_after_fire:search": {"count": 1, "example": "toy_1"}
    }


def test_gzipped_split_reads_like_the_plain_one(tmp_path: Path) -> None:
    for name in ("schema.json", "dialogues_001.json"):
        with gzip.open(tmp_path / f"{name}.gz", "wb") as out:
            out.write((FIXTURE / name).read_bytes())
    assert [d.dialogue_id for d in load_dialogues(tmp_path)] == list(DIALOGUES)
    assert load_schema(tmp_path) == SCHEMA


def test_missing_files_are_reported(tmp_path: Path) -> None:
    shutil.copy(FIXTURE / "schema.json", tmp_path / "schema.json")
    with pytest.raises(FileNotFoundError, match="dialogues_"):
        next(load_dialogues(tmp_path))


def test_script_json_output_has_every_key() -> None:
    script = ROOT / "scripts" / "sgd_replay"
    done = subprocess.run(
        [sys.executable, str(script), "--split-dir", str(FIXTURE), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report = json.loads(done.stdout)
    assert set(KEYS) <= set(report)
    assert report["dialogues"] == 7 and report["joint_state_accuracy"] == 1.0
    assert isinstance(report["seconds"], float)


@pytest.mark.parametrize("slots", [5, 20, 100])
def test_bench_flows_compile_and_stop_mid_conversation(slots: int) -> None:
    from pipecat_steward.core.slots import Ask, decide
    from pipecat_steward.replay.bench import mid_state, synthetic_config

    flow = compile_flow(synthetic_config(slots))
    state = mid_state(flow)
    assert state.succeeded == ["T0", "T1"]
    assert decide(flow, state) == Ask((f"s{slots // 2}",))


def _dialogue(*user_frames: tuple[str, dict[str, str], dict[str, str] | None]) -> dict[str, Any]:
    """A Toy_1 dialogue: per user turn (intent, gold values, the next system turn's call)."""
    turns: list[dict[str, Any]] = []
    for intent, values, call in user_frames:
        said = ", ".join(values.values()) or "…"  # the caller names the values
        turns.append({"speaker": "USER", "utterance": said, "frames": [_frame(intent, values)]})
        turns.append(_system(call, intent))
    return {"dialogue_id": "toy_2", "services": ["Toy_1"], "turns": turns}


def _schema(slots: list[str], intents: list[str]) -> dict[str, Any]:
    return {
        **TOY_SCHEMA,
        "slots": [
            {"name": n, "description": n, "is_categorical": False, "possible_values": []}
            for n in slots
        ],
        "intents": [
            {
                "name": i,
                "description": "",
                "is_transactional": False,
                "required_slots": [slots[0]],
                "optional_slots": {},
                "result_slots": [],
            }
            for i in intents
        ],
    }


REPLAY_WORDS = [
    "intent",
    "goodbye",
    "EndDialogue",
    "end_dialogue",
    "set_goodbye",
    "SetGoodbye",
    "replay_intent_2",
    "replay_goodbye_2",
    "FindThing",
    "city",
]


@given(
    slots=st.lists(st.sampled_from(REPLAY_WORDS), min_size=1, max_size=6, unique=True),
    intents=st.lists(
        st.sampled_from(["FindThing", "EndDialogue", "SetGoodbye", "End"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
)
@settings(max_examples=60, deadline=None)
def test_any_schema_names_replay_without_clashing(slots: list[str], intents: list[str]) -> None:
    schema = _schema(slots, intents)
    names = replay_names(schema)
    assert not names.slots & set(slots) and names.end_task not in {*slots, *intents}
    tools = {tool_name(i) for i in intents} | {"set_toy_1"}
    assert not {names.end_tool, names.goodbye_setter} & tools
    flow = compile_flow(build_flow_config(schema))
    assert set(slots) <= set(flow.slot)
    replayer = Replayer({"Toy_1": schema})
    values = {slots[0]: "a"}
    replayer.replay(parse_dialogue(_dialogue((intents[0], values, None))))
    report = replayer.metrics.report()
    assert report["joint_state_accuracy"] == report["completion_agreement"] == 1.0


def test_a_schema_slot_called_intent_is_compared_like_any_other() -> None:
    schema = _schema(["intent", "goodbye"], ["FindThing"])
    replayer = Replayer({"Toy_1": schema})
    dialogue = _dialogue(
        ("FindThing", {"intent": "buy"}, {"intent": "buy"}),
        ("FindThing", {"intent": "buy", "goodbye": "soon"}, None),
    )
    replayer.replay(parse_dialogue(dialogue))
    report = replayer.metrics.report()
    assert report["joint_state_accuracy"] == report["service_call_agreement"] == 1.0
    assert report["mismatches"] == {}


def test_a_frame_that_drops_values_is_a_fresh_intent_not_lost_state() -> None:
    # A second search of the same intent with a new city and no count: SGD starts a new frame.
    replayer = Replayer({"Toy_1": TOY_SCHEMA})
    dialogue = _dialogue(
        ("FindThing", {"city": "Paris", "count": "2"}, {"city": "Paris", "count": "2"}),
        ("FindThing", {"city": "Rome"}, {"city": "Rome"}),
    )
    replayer.replay(parse_dialogue(dialogue))
    report = replayer.metrics.report()
    assert report["fresh_frames"] == 1 and report["corrections"] == 0
    assert report["joint_state_accuracy"] == report["completion_agreement"] == 1.0
    assert report["call_argument_agreement"] == report["call_turn_agreement"] == 1.0
    assert report["mismatches"] == {}


def test_a_search_runs_again_when_the_caller_adds_a_constraint() -> None:
    replayer = Replayer({"Toy_1": TOY_SCHEMA})
    dialogue = _dialogue(
        ("FindThing", {"city": "Paris"}, {"city": "Paris"}),
        ("FindThing", {"city": "Paris", "count": "3"}, {"city": "Paris", "count": "3"}),
    )
    replayer.replay(parse_dialogue(dialogue))
    report = replayer.metrics.report()
    assert report["call_argument_agreement"] == report["call_turn_agreement"] == 1.0
    assert report["corrections"] == 0 and report["mismatches"] == {}


def test_report_times_parsing_apart_from_the_replay() -> None:
    report = replay_split(FIXTURE)
    assert 0 < report["parse_seconds"] < report["seconds"]
    assert report["replay_to_parse_ratio"] > 0 and report["user_turns_per_second"] > 0


BOOK_SCHEMA = {
    **TOY_SCHEMA,
    "intents": [
        {
            "name": "BookThing",
            "description": "",
            "is_transactional": True,
            "required_slots": ["city"],
            "optional_slots": {"count": "1"},
            "result_slots": [],
        }
    ],
}


def _affirm(turn: dict[str, Any]) -> dict[str, Any]:
    frame = turn["frames"][0]
    frame["actions"].append({"act": "AFFIRM", "slot": "", "values": [], "canonical_values": []})
    return turn


def test_a_transaction_fires_on_the_callers_confirmation_and_a_change_withdraws_it() -> None:
    book = {"city": "Paris", "count": "2"}
    raw = _dialogue(
        ("BookThing", {"city": "Paris"}, None),  # ready, but not yet confirmed: no call
        ("BookThing", book, None),  # a new value before the confirmation
        ("BookThing", book, {"city": "Paris", "count": "2"}),  # "yes" → the call
        ("BookThing", {"city": "Rome", "count": "2"}, None),  # a change withdraws it
        ("BookThing", {"city": "Rome", "count": "2"}, {"city": "Rome", "count": "2"}),
    )
    for index in (4, 8):
        _affirm(raw["turns"][index])
    replayer = Replayer({"Toy_1": BOOK_SCHEMA})
    replayer.replay(parse_dialogue(raw))
    report = replayer.metrics.report()
    assert report["service_calls"] == 2 and report["corrections"] == 1
    assert report["joint_state_accuracy"] == report["completion_agreement"] == 1.0
    assert report["call_turn_agreement"] == report["call_argument_agreement"] == 1.0
    assert report["mismatches"] == {}


def test_a_split_folder_may_be_named_by_a_string() -> None:
    timings = ("seconds", "parse_seconds", "user_turns_per_second", "replay_to_parse_ratio")
    by_path, by_text = replay_split(FIXTURE), replay_split(str(FIXTURE))
    for report in (by_path, by_text):
        for key in timings:
            report.pop(key)
    assert by_text == by_path
    assert list(load_dialogues(str(FIXTURE))) == list(load_dialogues(FIXTURE))
