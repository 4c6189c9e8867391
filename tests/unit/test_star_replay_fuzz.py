"""A fuzzer of the STAR replay: generated tasks and dialogues in STAR's format must replay.

Only 12 of STAR's 24 tasks are here, but the replay will meet the others: flowcharts, labels,
API names, argument names and dialogue shapes these never show. Hypothesis writes STAR folders
(``tasks/*.json`` flowcharts in the real tasks' shapes, ``apis/*.json`` schemas or none,
``dialogues_*.jsonl.gz`` with single- and multi-task dialogues that follow, skip and leave the
flowchart, see ``tests/star_support``) with unusual names and texts, and checks that
``replay_star`` never raises and that its report stays well formed: every ratio a float in
[0, 1] (None exactly when nothing was counted), counts that match the dialogues written, and
the same report on a second run. The format's rules are asserted on every generated folder
and, when it is present, on the real data.

The loose shapes (flowcharts without ``hello`` or with cycles and labels that have no reply,
capabilities missing from the folder, queries of other tasks, events missing their keys) break
the format: the replay must survive them too, but their figures need not mean anything.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.star_support.dialogues import dialogues, pick, query, result, user
from tests.star_support.flowcharts import Task, loosen, tasks
from tests.star_support.local_data import real_star_data
from tests.star_support.names import TEXT, USER_TEXT, Draw, Raw, step_label
from tests.star_support.star_format import (
    check_api,
    check_dialogue,
    check_flowchart,
    check_folder,
    write_folder,
)

from pipecat_steward.replay.star_data import load_apis, load_tasks
from pipecat_steward.replay.star_replay import replay_star
from pipecat_steward.replay.star_report import KEYS

ROOT = Path(__file__).resolve().parents[2]
TIMINGS = ("dialogues_per_second", "seconds")
CLASSES = {
    "earlier_query_not_made",
    "picked_after_query",
    "asked_not_answered",
    "value_given_not_heard",
    "no_evidence",
}
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]

# --- checks --------------------------------------------------------------------------------


def _count(value: object) -> int:
    assert type(value) is int and value >= 0, value
    return value


def _ratios(report: Mapping[str, Any]) -> Iterator[tuple[str, object, int]]:
    """Every ratio of the report with the count it divides by."""
    entries = report["tasks"]
    for side in ("happy", "unhappy"):
        queries = sum(_count(t[side]["queries"]) for t in entries.values())
        yield f"gold_queries_allowed_{side}", report[f"gold_queries_allowed_{side}"], queries
        heard = f"gold_queries_allowed_{side}_heard_only"
        yield heard, report[heard], queries
        agreement = report[f"next_action_{side}"]
        for key in ("accuracy", "macro_f1"):
            yield f"next_action_{side}.{key}", agreement[key], _count(agreement["actions"])
        for task, entry in entries.items():
            own = entry[side]
            yield f"{task}.{side}.allowed", own["allowed"], own["queries"]
            yield f"{task}.{side}.allowed_heard_only", own["allowed_heard_only"], own["queries"]
            for key in ("accuracy", "macro_f1"):
                actions = _count(own["next_action"]["actions"])
                yield f"{task}.{side}.next_action.{key}", own["next_action"][key], actions
    kinds = report["perturbations"]
    broke = sum(_count(kinds[k]["broke_an_edge"]) for k in ("drop", "early"))
    yield "perturbations_caught", report["perturbations_caught"], broke
    for kind in ("drop", "early"):
        yield f"{kind}.caught_share", kinds[kind]["caught_share"], kinds[kind]["broke_an_edge"]
    echo = report["echo_rule"]
    yield "echo_rule.wrong_share", echo["wrong_share"], _count(echo["named_step"])


def check_report(report: Mapping[str, Any], dialogue_count: int) -> None:
    """JSON-safe, the headline keys, ratios in [0, 1] or None, counts that add up."""
    json.dumps(report, allow_nan=False)
    assert set(KEYS) <= set(report)
    assert report["dialogues"] == dialogue_count
    for path, value, whole in _ratios(report):
        if whole == 0:
            assert value is None, (path, value)
        else:
            assert type(value) is float and 0.0 <= value <= 1.0, (path, value, whole)
    speed = report["dialogues_per_second"]
    assert speed is None or (type(speed) is float and speed >= 0.0)
    _check_vetoes(report)
    _check_perturbations(report)
    echo = report["echo_rule"]
    assert _count(echo["named_step"]) <= _count(echo["drafts"])
    assert _count(echo["same_template"]) + _count(echo["other_template"]) == echo["named_step"]
    for n in report["guidance"].values():
        _count(n)
    for counter in report["ask_rule"].values():
        assert all(_count(n) > 0 for n in counter.values())


def _check_vetoes(report: Mapping[str, Any]) -> None:
    """Vetoes per task and listed agree, each with one class per open step."""
    for side in ("happy", "unhappy"):
        tallies = [t[side] for t in report["tasks"].values()]
        vetoes = sum(_count(t["vetoes"]) for t in tallies)
        queries = sum(t["queries"] for t in tallies)
        assert all(t["vetoes"] <= t["queries"] for t in tallies)
        listed = report[f"vetoes_{side}"]
        assert len(listed) == vetoes
        assert all(len(v["open"]) == len(v["classes"]) >= 1 for v in listed)
        classes = Counter(c for v in listed for c in v["classes"])
        assert classes == Counter(report[f"veto_classes_{side}"]) and set(classes) <= CLASSES
        if queries:
            share = round((queries - vetoes) / queries, 4)
            assert report[f"gold_queries_allowed_{side}"] == share
        actions = sum(t["next_action"]["actions"] for t in tallies)
        assert report[f"next_action_{side}"]["actions"] == actions


def _check_perturbations(report: Mapping[str, Any]) -> None:
    kinds = report["perturbations"]
    uncaught = 0
    for kind in ("drop", "early"):
        entry = kinds[kind]
        assert _count(entry["caught"]) <= _count(entry["broke_an_edge"]) <= _count(entry["made"])
        uncaught += entry["broke_an_edge"] - entry["caught"]
    assert len(kinds["missed"]) == uncaught
    per_task = [t["perturbations"] for t in report["tasks"].values()]
    assert sum(_count(p["broke_an_edge"]) for p in per_task) == sum(
        kinds[k]["broke_an_edge"] for k in ("drop", "early")
    )
    assert sum(_count(p["caught"]) for p in per_task) == sum(
        kinds[k]["caught"] for k in ("drop", "early")
    )


def _capabilities(raw: Raw, names: set[str]) -> list[str]:
    listed = [str(c["Task"]) for c in raw["Scenario"]["WizardCapabilities"]]
    return [t for t in dict.fromkeys(listed) if t in names]


def check_counts(report: Mapping[str, Any], folder: Sequence[Task], raws: Sequence[Raw]) -> None:
    """Queries per task and next actions, as the written dialogues hold them.

    Each query of a task is a gold query of that task; every wizard pick and query of a
    single-task dialogue is one next action; only happy dialogues are perturbed.
    """
    names = {t.name for t in folder}
    assert set(report["tasks"]) == names
    queries: Counter[tuple[str, bool]] = Counter()
    actions: Counter[bool] = Counter()
    for raw in raws:
        happy = raw["Scenario"]["Happy"]
        capabilities = _capabilities(raw, names)
        wizard = [e for e in raw["Events"] if e["Agent"] == "Wizard"]
        called = [e["APIName"] for e in wizard if e["Action"] == "query"]
        queries.update((api, happy) for api in called if api in capabilities)
        if len(capabilities) == 1:
            actions[happy] += sum(e["Action"] in ("pick_suggestion", "query") for e in wizard)
    for task, entry in report["tasks"].items():
        for side, happy in (("happy", True), ("unhappy", False)):
            assert entry[side]["queries"] == queries[(task, happy)], (task, side)
    for side, happy in (("happy", True), ("unhappy", False)):
        assert report[f"next_action_{side}"]["actions"] == actions[happy], side
    if not any(raw["Scenario"]["Happy"] for raw in raws):
        assert all(report["perturbations"][k]["made"] == 0 for k in ("drop", "early"))


def _stable(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report without its timings (the only part two runs may differ in)."""
    return {k: v for k, v in report.items() if k not in TIMINGS}


def _replay(folder: Sequence[Task], raws: Sequence[Raw], **layout: Any) -> dict[str, Any]:
    """Write the folder, replay it twice (fresh each time) and return the first report."""
    with tempfile.TemporaryDirectory() as tmp:
        data = write_folder(Path(tmp) / "star", folder, raws, **layout)
        first = replay_star(data)
        second = replay_star(str(data))
    assert _stable(first) == _stable(second)
    return first


# --- generated folders ---------------------------------------------------------------------


@st.composite
def _folder(
    draw: Draw[Any], loose: bool = False, counts: Sequence[int] = range(6), long: bool = False
) -> tuple[list[Task], list[Raw], dict[str, Any]]:
    folder = draw(tasks())
    moves = range(40, 121) if long else range(21)
    count = draw(st.sampled_from(counts))
    raws = [draw(dialogues(folder, n, loose, moves)) for n in range(1, count + 1)]
    if loose:
        folder = [draw(loosen(t)) if draw(st.booleans()) else t for t in folder]
    layout = {"files": draw(st.integers(1, 2)), "apis": draw(st.booleans())}
    return folder, raws, layout


@given(_folder())
@settings(max_examples=300, deadline=None, suppress_health_check=_SLOW)
def test_any_star_folder_replays_to_a_well_formed_and_repeatable_report(
    case: tuple[list[Task], list[Raw], dict[str, Any]],
) -> None:
    folder, raws, layout = case
    check_folder(folder, raws)
    report = _replay(folder, raws, **layout)
    check_report(report, len(raws))
    check_counts(report, folder, raws)


@given(_folder(counts=[1, 2], long=True))
@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW)
def test_a_very_long_dialogue_replays(case: tuple[list[Task], list[Raw], dict[str, Any]]) -> None:
    folder, raws, layout = case
    report = _replay(folder, raws, **layout)
    check_report(report, len(raws))
    check_counts(report, folder, raws)


@given(_folder(loose=True))
@settings(max_examples=150, deadline=None, suppress_health_check=_SLOW)
def test_shapes_beyond_the_format_replay_without_raising(
    case: tuple[list[Task], list[Raw], dict[str, Any]],
) -> None:
    folder, raws, layout = case
    check_report(_replay(folder, raws, **layout), len(raws))


def _dialogue(task: str, events: list[Raw]) -> Raw:
    scenario = {"Happy": True, "MultiTask": False, "WizardCapabilities": [{"Task": task}]}
    return {"DialogueID": 1, "Scenario": scenario, "Events": events}


@st.composite
def _walked(draw: Draw[Any]) -> tuple[Task, Raw]:
    """A linear flowchart of odd labels and a dialogue that says and answers every step."""
    labels = draw(st.lists(step_label("w"), min_size=1, max_size=5, unique=True))
    chart = {
        "task": "w",
        "replies": {"hello": "Hello", **{x: draw(TEXT) for x in labels}, "query": "Query"},
        "graph": dict(zip(["hello", *labels], [*labels, "query"], strict=True)),
    }
    events = [user(draw(USER_TEXT)), pick("hello", "Hello")]
    for label in labels:
        events += [pick(label, chart["replies"][label]), user(draw(USER_TEXT))]
    events += [query("w", []), result("w", None)]
    return Task("w", chart, None, (), "linear"), _dialogue("w", events)


@given(_walked())
@settings(max_examples=100, deadline=None, suppress_health_check=_SLOW)
def test_a_dialogue_that_walks_the_flowchart_is_allowed_its_query_whatever_the_labels(
    case: tuple[Task, Raw],
) -> None:
    # Every step was said and answered before the call: the gate allows it, and every
    # perturbation that opens a step again is caught, whatever the labels are called.
    task, raw = case
    report = _replay([task], [raw])
    assert report["gold_queries_allowed_happy"] == 1.0
    assert report["perturbations_caught"] in (None, 1.0)
    assert report["perturbations"]["missed"] == []


_REPLAY_EACH = (
    "import json, sys\n"
    "from pipecat_steward.replay.star_replay import replay_star\n"
    "print(json.dumps([replay_star(folder) for folder in sys.argv[1:]]))\n"
)


def _replay_elsewhere(hash_seed: str, folders: Sequence[Path]) -> list[dict[str, Any]]:
    """The stable reports of the folders, replayed in a new process with this hash seed."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _REPLAY_EACH, *map(str, folders)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    return [_stable(report) for report in json.loads(done.stdout)]


@given(st.lists(_folder(), min_size=4, max_size=4))
@settings(max_examples=3, deadline=None, suppress_health_check=_SLOW)
def test_a_new_process_with_another_hash_seed_gives_the_same_report(
    cases: list[tuple[list[Task], list[Raw], dict[str, Any]]],
) -> None:
    # The order of a set of strings changes with the hash seed from one process to the next;
    # a report that followed it would change between two runs of the same data.
    with tempfile.TemporaryDirectory() as tmp:
        folders = [
            write_folder(Path(tmp) / str(n), folder, raws, **layout)
            for n, (folder, raws, layout) in enumerate(cases)
        ]
        first, second = (_replay_elsewhere(seed, folders) for seed in ("1", "2"))
    assert first == second


# --- the format check on the real files ----------------------------------------------------


@pytest.mark.skipif(real_star_data() is None, reason="STAR data not present (set STAR_DATA)")
def test_the_format_check_accepts_the_real_star_files() -> None:
    # The checks encode STAR's format as the real files have it, not only as the generators
    # write it.
    data = real_star_data()
    assert data is not None
    flowcharts = load_tasks(data)
    for chart in flowcharts.values():
        check_flowchart(chart)
    for api in load_apis(data).values():
        check_api(api)
    ids: set[object] = set()
    for path in sorted(data.glob("dialogues_*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                raw = json.loads(line)
                check_dialogue(raw, flowcharts)
                assert raw["DialogueID"] not in ids
                ids.add(raw["DialogueID"])


# --- regressions the fuzzer found ----------------------------------------------------------


@pytest.mark.parametrize("label", ["2nd_ask", "ask-name", "ask name", "météo", ""])
def test_a_label_that_is_no_identifier_is_a_step_its_pick_completes(
    label: str, tmp_path: Path
) -> None:
    # Step ids are ASCII identifiers. The compiler once renamed such labels (``ask-name`` →
    # ``ask_name``) but passed ``2nd_ask`` on, which the engine refused (ConfigError), while
    # the dialogue's picks and the reply templates kept the label, so no pick ever completed
    # the step and a dialogue that follows the flowchart had its query vetoed.
    chart = {
        "task": "t",
        "replies": {"hello": "Hello", label: "Your name?", "ask_name": "Name?", "query": "Q"},
        "graph": {"hello": "ask_name", "ask_name": label, label: "query"},
    }
    events = [
        pick("hello", "Hello"),
        pick("ask_name", "Name?"),
        user("Ada"),
        pick(label, "Your name?"),
        user("Ada"),
        query("t", []),
        result("t", None),
    ]
    folder = [Task("t", chart, None, (), "linear")]
    report = replay_star(write_folder(tmp_path / "star", folder, [_dialogue("t", events)]))
    assert report["gold_queries_allowed_happy"] == 1.0
    steps = report["tasks"]["t"]["steps"]
    assert len(steps) == 3 and list(steps.values()).count("ask") == 2  # its template asks


def test_a_task_named_as_another_tasks_api_function_keeps_its_queries(tmp_path: Path) -> None:
    # An API schema's ``function`` names the API the dialogues may call (``hotel_book`` calls
    # ``hotel_reserve``). When it named another task of the folder, that task's own queries
    # were routed to the schema's task, which the dialogue did not have: they went uncounted.
    chart = {
        "task": "t",
        "replies": {"hello": "Hello", "query": "Query"},
        "graph": {"hello": "query"},
    }
    api = {"input": [], "output": [], "required": [], "function": "a"}
    folder = [Task("a", chart, None, (), "linear"), Task("b", chart, api, (), "linear")]
    events = [pick("hello", "Hello"), query("a", []), result("a", None)]
    report = replay_star(write_folder(tmp_path / "star", folder, [_dialogue("a", events)]))
    assert report["tasks"]["a"]["happy"]["queries"] == 1
    assert report["gold_queries_allowed_happy"] == 1.0
