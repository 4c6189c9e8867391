"""STAR's format as assertions, and a writer of generated data into a STAR folder.

``check_flowchart``, ``check_api``, ``check_dialogue`` and ``check_folder`` assert the format;
``write_folder`` writes generated tasks and dialogues as a STAR folder. The rules are those the
real files keep (the 12 local tasks and their 3,017 dialogues pass them): the generators
promise them, and the fuzzer's loose shapes are the ones that break them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Collection, Sequence
from pathlib import Path

from tests.star_support.flowcharts import Task
from tests.star_support.names import Raw

_EVENTS = {
    ("User", "utter"),
    ("User", "complete"),
    ("UserGuide", "instruct"),
    ("Wizard", "request_suggestions"),
    ("Wizard", "pick_suggestion"),
    ("Wizard", "utter"),
    ("Wizard", "query"),
    ("Wizard", "select_task"),
    ("Wizard", "select_primary"),
    ("Wizard", "select_secondary"),
    ("KnowledgeBase", "return_item"),
}


def check_flowchart(chart: Raw) -> None:
    """Assert the flowchart's format.

    ``replies`` and ``graph`` map strings to strings; the graph starts at ``hello`` and names
    only labels that have a reply.
    """
    assert isinstance(chart["task"], str)
    replies, graph = chart["replies"], chart["graph"]
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in replies.items())
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in graph.items())
    assert "hello" in graph
    assert {x for kv in graph.items() for x in kv} <= set(replies)


def check_api(api: Raw) -> None:
    """Assert an API schema's format: named, typed inputs that hold the required ones."""
    names = [f["Name"] for f in api["input"]]
    assert len(names) == len(set(names))
    assert all(isinstance(f["Type"], str) and "ReadableName" in f for f in api["input"])
    assert set(api["required"]) <= set(names)
    assert isinstance(api["function"], str) and isinstance(api["output"], list)


def check_dialogue(raw: Raw, tasks: Collection[str]) -> None:
    """Assert a dialogue's format.

    The scenario names distinct tasks of the folder (several only when ``MultiTask``); every
    event is of a known agent and action with its keys; each query names a capability and
    gets its result at once, and every result answers the query right before it.
    """
    assert isinstance(raw["DialogueID"], int)
    scenario = raw["Scenario"]
    assert isinstance(scenario["Happy"], bool) and isinstance(scenario["MultiTask"], bool)
    listed = [c["Task"] for c in scenario["WizardCapabilities"]]
    assert listed and set(listed) <= set(tasks) and len(listed) == len(set(listed))
    assert scenario["MultiTask"] == (len(listed) > 1)
    events = raw["Events"]
    for i, event in enumerate(events):
        kind = (event["Agent"], event["Action"])
        assert kind in _EVENTS, kind
        if kind in {("User", "utter"), ("Wizard", "utter"), ("UserGuide", "instruct")}:
            assert isinstance(event["Text"], str)
        if kind == ("Wizard", "request_suggestions"):
            assert event["Text"].strip()
        if kind == ("Wizard", "pick_suggestion"):
            assert isinstance(event["ActionLabel"], str)
            assert event["ActionLabel"] in event["ActionLabelOptions"]
        if kind == ("Wizard", "query"):
            _check_query(event, listed)
            following = events[i + 1] if i + 1 < len(events) else {}
            assert following.get("Action") == "return_item", "a query's result follows it"
            assert following["APIName"] == event["APIName"]
        if kind == ("KnowledgeBase", "return_item"):
            assert i and events[i - 1]["Action"] == "query", "a result answers a query"
            assert isinstance(event.get("Item", {}), dict)


def _check_query(event: Raw, listed: Sequence[str]) -> None:
    assert event["APIName"] in listed
    for constraint in event["Constraints"]:
        assert len(constraint) == 1
        assert all(isinstance(v, str) for v in constraint.values())


def check_folder(folder: Sequence[Task], raws: Sequence[Raw]) -> None:
    """Assert every task, schema and dialogue keeps the format, with unique dialogue ids."""
    names = {t.name for t in folder}
    assert len(names) == len(folder)
    for task in folder:
        check_flowchart(task.flowchart)
        if task.api is not None:
            check_api(task.api)
    for raw in raws:
        check_dialogue(raw, names)
    ids = [raw["DialogueID"] for raw in raws]
    assert len(ids) == len(set(ids))


def write_folder(
    root: Path, folder: Sequence[Task], raws: Sequence[Raw], files: int = 1, apis: bool = True
) -> Path:
    """Write a STAR folder: ``tasks/`` (with response files), ``apis/``, ``dialogues_*``.

    Args:
        root: The folder to create.
        folder: The tasks.
        raws: The dialogues, spread over ``files`` dialogue files.
        files: How many ``dialogues_*.jsonl.gz`` files.
        apis: Whether to write ``apis/`` at all (its schemas are those of tasks that have one).
    """
    (root / "tasks").mkdir(parents=True)
    for task in folder:
        _dump(root / "tasks" / f"{task.name}.json", task.flowchart)
        replies, graph = task.flowchart.get("replies", {}), task.flowchart.get("graph", {})
        responses = {k: v for k, v in replies.items() if k not in graph}
        _dump(root / "tasks" / f"{task.name}.responses.json", responses)
    if apis:
        (root / "apis").mkdir()
        for task in folder:
            if task.api is not None:
                _dump(root / "apis" / f"{task.name}.json", task.api)
    for n in range(files):
        with gzip.open(root / f"dialogues_{n:02d}.jsonl.gz", "wt", encoding="utf-8") as handle:
            for raw in raws[n::files]:
                handle.write(json.dumps(raw) + "\n")
    return root


def _dump(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
