"""STAR dialogues of generated tasks, written by hypothesis as the dialogue files hold them.

``dialogues`` writes one raw dialogue (``DialogueID``, ``Scenario``, ``Events``) the way the
real ones go: the wizard walks a task's flowchart, picking suggestions (``pick_suggestion``
with its ``ActionLabel``) or typing free text, after drafting (``request_suggestions``); the
user answers, often with a value of an API input; every ``query`` is followed at once by the
knowledge base's ``return_item`` (with an ``Item``, or none); a multi-task dialogue lists
several capabilities (three or four in the real files) and switches with ``select_task``.
Wizards deviate as the real ones do: they skip steps, pick labels outside the flowchart
(``custom``, ``goodbye_2``, another task's), query with arguments the user never said; users
say odd things; dialogues end early or have no events. Half the dialogues are *faithful*: the
wizard follows the flowchart and the user answers every question (they reach the queries the
perturbations start from).

``loose=True`` adds shapes the real files never show (a capability missing from the folder, a
query of a task that is not a capability or of an API alias, a result without a query, a query
without a result, events missing their keys, constraint values that are not strings).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st
from tests.star_support.flowcharts import Task
from tests.star_support.names import (
    OUTCOME_PAIRS,
    TEXT,
    USER_TEXT,
    VALUE,
    WORD,
    Draw,
    Raw,
    step_label,
)

_MESSAGES = ["Available", "Unavailable", "Reservation Confirmed", "Booking failed", "Done"]
_OFF_CHART = ["custom", "goodbye_1", "goodbye_2", "anything_else", "out_of_scope", "hello"]
_NOT_WALKED = frozenset({"yes", "no", "available", "unavailable", "query_success", "query_failure"})


def _is_query(label: str) -> bool:
    return (label == "query" or label.startswith("query_")) and label not in _NOT_WALKED


def user(text: str) -> Raw:
    return {"Agent": "User", "Action": "utter", "Text": text}


def pick(label: str, text: str, options: Sequence[str] = ()) -> Raw:
    listed = list(dict.fromkeys([label, *options]))
    return {
        "Agent": "Wizard",
        "Action": "pick_suggestion",
        "ActionLabel": label,
        "ActionLabelOptions": listed,
        "Text": text,
    }


def query(api: str, constraints: Sequence[tuple[str, str]]) -> Raw:
    cons = [{k: v} for k, v in constraints]
    return {"Agent": "Wizard", "Action": "query", "APIName": api, "Constraints": cons}


def result(api: str, item: Raw | None) -> Raw:
    raw: Raw = {
        "Agent": "KnowledgeBase",
        "Action": "return_item",
        "APIName": api,
        "TotalItems": -1 if item else 0,
    }
    if item is not None:
        raw["Item"] = {"APIName": api, **item}
    return raw


class _Writer:
    """Writes one dialogue event by event from hypothesis draws."""

    def __init__(
        self, draw: Draw[Any], folder: Sequence[Task], loose: bool, moves: Sequence[int]
    ) -> None:
        self.draw = draw
        self.folder = folder
        self.loose = loose
        self.moves = moves
        """How many moves a stretch of one task may take."""
        self.events: list[Raw] = []
        self.faithful = draw(st.booleans())
        """Whether the wizard follows the flowchart and the user answers every question."""
        self.given: dict[str, dict[str, str]] = {}
        """Task → API input → the value the user gave for it."""

    def dialogue(self, number: int | str) -> Raw:
        draw = self.draw
        chosen = draw(st.lists(st.sampled_from(list(self.folder)), min_size=1, max_size=4))
        capabilities = list({t.name: t for t in chosen}.values())
        multi = len(capabilities) > 1
        if draw(st.booleans()):
            self.events.append({"Agent": "UserGuide", "Action": "instruct", "Text": draw(TEXT)})
        nodes: dict[str, str | None] = {t.name: "hello" for t in capabilities}
        for _ in range(draw(st.sampled_from([1, 2, 3, 4] if multi else [1]))):
            task = draw(st.sampled_from(capabilities))
            if multi:
                self.events.append({"Agent": "Wizard", "Action": "select_task", "Task": task.name})
            steps = draw(st.sampled_from(self.moves))
            nodes[task.name] = self._walk(task, nodes[task.name], steps)
        self._end()
        listed = [t.name for t in capabilities]
        if self.loose and draw(st.integers(0, 3)) == 0:
            listed.append(draw(st.sampled_from(["ghost_task", "", *listed])))
        scenario = {
            "Domains": sorted({n.split("_")[0] for n in listed}),
            "Happy": draw(st.booleans()),
            "MultiTask": multi,
            "UserTask": draw(TEXT),
            "WizardCapabilities": [{"Domain": "d", "Task": n} for n in listed],
            "WizardTask": draw(TEXT),
        }
        return {"DialogueID": number, "Scenario": scenario, "Events": self.events}

    def _end(self) -> None:
        """A completed dialogue, or one cut off (never between a query and its result)."""
        if self.draw(st.integers(0, 3)):
            self.events.append({"Agent": "User", "Action": "complete"})
            return
        cut = self.draw(st.integers(0, len(self.events)))
        while 0 < cut < len(self.events) and self.events[cut - 1]["Action"] == "query":
            cut += 1
        del self.events[cut:]

    # --- walking a flowchart ---

    def _walk(self, task: Task, node: str | None, steps: int) -> str | None:
        """Play up to ``steps`` moves of ``task`` from ``node``; return where it stopped."""
        for _ in range(steps):
            move = 9 if self.faithful else self.draw(st.integers(0, 11))
            if move == 0:
                self._off_chart(task)
            elif move == 1:
                self.events.append(user(self.draw(USER_TEXT)))
            elif move == 2 and node is not None:
                node = self._next(task, node, "")  # the wizard skips the step
            elif node is None:
                self._off_chart(task)
            elif _is_query(node):
                node = self._query(task, node)
            else:
                node = self._step(task, node)
        return node

    def _off_chart(self, task: Task) -> None:
        """A wizard action the flowchart does not place."""
        others = [label for t in self.folder for label in t.replies]
        label = self.draw(
            st.one_of(st.sampled_from(_OFF_CHART + others), step_label("other"), WORD)
        )
        if self.draw(st.booleans()):
            text = task.replies[label] if label in task.replies else self.draw(TEXT)
            self.events.append(pick(label, text))
        else:
            self.events.append({"Agent": "Wizard", "Action": "utter", "Text": self.draw(TEXT)})

    def _step(self, task: Task, node: str) -> str | None:
        """The wizard says the step (a pick or its own words); the user may answer."""
        draw = self.draw
        template = task.replies.get(node, "")
        if node == "hello" and draw(st.booleans()):
            self.events.append(user(draw(USER_TEXT)))
        if draw(st.booleans()):
            draft = draw(st.one_of(st.just(template), TEXT)).strip() or "draft"
            self.events.append({"Agent": "Wizard", "Action": "request_suggestions", "Text": draft})
        if draw(st.integers(0, 4)):
            options = draw(st.lists(st.sampled_from(list(task.replies)), max_size=5))
            self.events.append(pick(node, template, options))
        else:
            text = draw(st.one_of(st.just(template), TEXT))
            self.events.append({"Agent": "Wizard", "Action": "utter", "Text": text})
        answer = self._answer(task) if self.faithful or draw(st.integers(0, 3)) else ""
        return self._next(task, node, answer)

    def _answer(self, task: Task) -> str:
        """The user's reply: a value of an API input (remembered for the query), or odd words."""
        draw = self.draw
        if task.inputs and draw(st.booleans()):
            spec = draw(st.sampled_from(task.inputs))
            value = draw(st.one_of(st.sampled_from(spec.get("Categories") or ["x"]), VALUE))
            self.given.setdefault(task.name, {})[spec["Name"]] = value
            text = draw(st.sampled_from([value, f"it is {value}", f"{value}, please"]))
        else:
            text = draw(st.one_of(USER_TEXT, st.sampled_from(["yes", "no", "I forgot it"])))
        self.events.append(user(text))
        return text

    def _next(self, task: Task, node: str, answer: str) -> str | None:
        """The label after ``node``: its successor, else a branch the answer takes, else none."""
        graph = task.graph
        branches = [b for b in graph if b not in graph.values() and b != "hello"]
        detours = [b for b in branches if b not in _NOT_WALKED]
        if detours and self.draw(st.integers(0, 7)) == 0:
            return graph[self.draw(st.sampled_from(detours))]  # "I can't remember my PIN"
        if node in graph:
            return graph[node]
        if answer in ("yes", "no") and answer in graph:
            return graph[answer]
        return None

    def _query(self, task: Task, label: str) -> str | None:
        """A query and its result; the next label follows the result's outcome branch."""
        draw = self.draw
        api = self._api(task)
        self.events.append(query(api, self._constraints(task, label)))
        item = draw(st.one_of(st.none(), _item(task)))
        if not (self.loose and draw(st.integers(0, 5)) == 0):
            self.events.append(result(api, item))
        if label in task.graph:
            return task.graph[label]
        pairs = [p for p in OUTCOME_PAIRS if p[0] in task.graph and p[1] in task.graph]
        if not pairs:
            return None
        pair = pairs[0] if label == "query_check" else pairs[-1]
        failed = item is None or "fail" in str(item.get("Message", "")).lower()
        return task.graph[pair[1] if failed else pair[0]]

    def _api(self, task: Task) -> str:
        if not self.loose or self.draw(st.integers(0, 3)):
            return task.name
        alias = str((task.api or {}).get("function", task.name))
        return self.draw(st.sampled_from([alias, "nobody", *(t.name for t in self.folder)]))

    def _constraints(self, task: Task, label: str) -> list[tuple[str, str]]:
        """The values the user gave (most of them), inputs never said, and the request type."""
        draw = self.draw
        given = self.given.get(task.name, {})
        out = [(k, self._constraint(v)) for k, v in given.items() if draw(st.integers(0, 4))]
        names = [str(f["Name"]) for f in task.inputs if f["Name"] not in given]
        if names:
            unsaid = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
            out += [(k, self._constraint(draw(VALUE))) for k in unsaid]
        if label.startswith("query_"):
            out.append(("RequestType", f'"{label.removeprefix("query_").title()}"'))
        return list(dict(out).items())

    def _constraint(self, value: str) -> str:
        """A constraint in one of the forms STAR's wizards wrote."""
        forms = [
            f'"{value}"',
            f'api.is_equal_to("{value}")',
            f'api.is_one_of(["{value}","other"])',
            f'api.contains("{value}")',
            "True",
            "False",
            "null",
            "api.is_at_least(3)",
            "api.is_equal_to()",
        ]
        if value.strip().isdecimal():
            forms.append(value.strip())
        if self.loose:
            forms += [value, '"', "api.is_one_of(", "\\"]
        return self.draw(st.sampled_from(forms))


@st.composite
def _item(draw: Draw[Any], task: Task) -> Raw:
    """What the knowledge base returns: some fields of the API, maybe a ``Message``."""
    names = [str(f["Name"]) for f in task.inputs]
    fields = st.sampled_from(names or ["Name"])
    values = st.one_of(VALUE, st.integers(-5, 500), st.booleans(), st.lists(VALUE, max_size=2))
    item: Raw = draw(st.dictionaries(fields, values, max_size=3))
    if draw(st.booleans()):
        item["Message"] = draw(st.one_of(st.sampled_from(_MESSAGES), TEXT))
    return item


_DROPPABLE = [("Scenario", "Happy"), ("Scenario", "WizardCapabilities"), ("", "Events")]


def _break(draw: Draw[Any], raw: Raw, folder: Sequence[Task]) -> Raw:
    """Shapes beyond the format: stray results, keys missing, values of other JSON types."""
    events: list[Raw] = raw["Events"]
    names = [t.name for t in folder]
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(events)))
        stray = draw(
            st.sampled_from(
                [
                    result(draw(st.sampled_from(names)), None),
                    {"Agent": "Wizard", "Action": "pick_suggestion"},
                    {"Agent": "User", "Action": "utter"},
                    {"Agent": "User", "Action": "utter", "Text": None},
                    {"Agent": "Wizard", "Action": "query", "APIName": names[0], "Constraints": []},
                    {"Agent": "Wizard", "Action": "query", "Constraints": [{"A": 1, "B": None}]},
                    {"Agent": "KnowledgeBase", "Action": "return_item", "Item": {}},
                    {"Agent": "Nobody", "Action": "dance"},
                    {},
                ]
            )
        )
        events.insert(at, stray)
    if draw(st.integers(0, 4)) == 0:
        raw["DialogueID"] = draw(st.one_of(st.none(), TEXT, st.just(0)))
    if draw(st.integers(0, 4)) == 0:
        where, key = draw(st.sampled_from(_DROPPABLE))
        (raw["Scenario"] if where == "Scenario" else raw).pop(key)
    return raw


@st.composite
def dialogues(
    draw: Draw[Any],
    folder: Sequence[Task],
    number: int | str,
    loose: bool = False,
    moves: Sequence[int] = range(21),
) -> Raw:
    """One dialogue over one to four of ``folder``'s tasks, as reading its JSON line gives it.

    Args:
        draw: Hypothesis's draw.
        folder: The tasks of the folder.
        number: The ``DialogueID``.
        loose: Whether to add shapes beyond the format.
        moves: How many moves (events of one kind or a step said and answered) each stretch
            of one task may take.
    """
    raw = _Writer(draw, folder, loose, moves).dialogue(number)
    if loose:
        raw = _break(draw, raw, folder)
    return json.loads(json.dumps(raw))
