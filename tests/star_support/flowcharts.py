"""STAR task flowcharts and API schemas, written by hypothesis in the shapes STAR uses.

A flowchart is ``{"task", "replies", "graph"}``: ``replies`` maps every label to its template,
``graph`` maps a label to the one label that follows it. The shapes the real tasks show, each
drawn here on generated names and combined at will:

- a main path from ``hello`` through ask and inform steps to ``query`` (or several
  ``query_<kind>`` calls), often on to a result reply and ``anything_else``;
- an outcome pair (``query_success`` / ``query_failure``, ``available`` / ``unavailable``) off a
  query with no successor of its own;
- check then book (``query_check``, a confirming question, ``yes`` → ``query_book``, ``no`` back
  to an earlier step), as the booking tasks;
- an alternative path (``info_missing`` → its own asks → back into the query), as the bank
  tasks;
- a search loop (result → "search more?"; ``yes`` back to the criteria, ``no`` → ``goodbye_1``);
- a branch label nothing else uses (``no`` → a goodbye), nodes with no outgoing edge, and a
  graph that places no query at all (the call only in ``replies``).

Every graph label is a key of ``replies`` (as in every real task); ``replies`` also holds
replies the graph never places. ``api`` is None when the task has no ``apis/<task>.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from tests.star_support.names import (
    FIELD_NAME,
    OUTCOME_PAIRS,
    TASK_NAME,
    TEXT,
    VALUE,
    WORD,
    Draw,
    Raw,
    step_label,
)

SHAPES = ("linear", "outcome", "check_book", "alternative", "search", "multi_query", "unplaced")
_TYPES = ("Categorical", "ShortString", "LongString", "Integer", "Boolean", "CategoricalMultiple")


@dataclass(frozen=True)
class Task:
    """One generated task: its flowchart, its API schema (None: no file) and its inputs.

    ``inputs`` are the API's input fields whether or not the schema file is written: the
    wizards' queries name them either way.
    """

    name: str
    flowchart: Raw
    api: Raw | None
    inputs: tuple[Raw, ...]
    shape: str

    @property
    def graph(self) -> dict[str, str]:
        return self.flowchart["graph"]

    @property
    def replies(self) -> dict[str, str]:
        return self.flowchart["replies"]


# --- API schemas ---------------------------------------------------------------------------


@st.composite
def _input(draw: Draw[Any], name: str) -> Raw:
    kind = draw(st.sampled_from(_TYPES))
    spec: Raw = {"Name": name, "Type": kind}
    if kind.startswith("Categorical"):
        spec["Categories"] = draw(st.lists(VALUE, min_size=1, max_size=4, unique=True))
    if kind == "Integer":
        spec["Min"], spec["Max"] = 0, draw(st.integers(1, 100))
    spec["ReadableName"] = draw(st.one_of(st.just(name), TEXT, WORD))
    return spec


@st.composite
def inputs(draw: Draw[Any], booking: bool) -> tuple[Raw, ...]:
    """The API's input fields; a booking API also takes ``RequestType`` (``Check``/``Book``)."""
    names = draw(st.lists(FIELD_NAME, max_size=5, unique=True))
    names = [n for n in names if n != "RequestType"]
    fields = [draw(_input(n)) for n in names]
    if booking:
        fields.append({"Name": "RequestType", "Type": "RequestType", "ReadableName": "Type"})
    return tuple(fields)


@st.composite
def api_schema(draw: Draw[Any], task: str, fields: tuple[Raw, ...], others: list[str]) -> Raw:
    """``apis/<task>.json``: inputs, outputs, the required inputs and the function name.

    The function is the task's own name, STAR's shared ``generic_sample``, another task's
    name (``hotel_book`` calls ``hotel_reserve``) or any name.
    """
    names = [f["Name"] for f in fields]
    required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    function = draw(st.one_of(st.just(task), st.just("generic_sample"), TASK_NAME))
    if others and draw(st.integers(0, 3)) == 0:
        function = draw(st.sampled_from(others))
    return {
        "input": list(fields),
        "output": draw(st.lists(st.sampled_from(list(fields)), max_size=2)) if fields else [],
        "required": required,
        "db": draw(st.sampled_from(["null", task, "hotel"])),
        "function": function,
        "returns_count": draw(st.booleans()),
    }


# --- flowcharts ----------------------------------------------------------------------------


def _ask_text(label: str) -> str:
    return f"Could you tell me the {label.replace('_', ' ')}, please?"


class _Chart:
    """A flowchart under construction: the graph in file order and each label's template."""

    def __init__(self, draw: Draw[Any], prefix: str) -> None:
        self.draw = draw
        self.prefix = prefix
        self.graph: dict[str, str] = {}
        self.replies: dict[str, str] = {"hello": "Hello, how can I help?"}
        self.used: set[str] = {"hello"}

    def label(self, kind: str = "ask") -> str:
        """A fresh step label with its template (an ask's ends with ``?``)."""
        for _ in range(5):
            label = self.draw(step_label(self.prefix))
            if label not in self.used:
                break
        else:
            label = f"{self.prefix}_{kind}_{len(self.used)}"
        self.used.add(label)
        text = _ask_text(label) if kind == "ask" else f"I have {{name:s}} for {label}."
        self.replies[label] = self.draw(st.one_of(st.just(text), st.just(text), TEXT))
        return label

    def chain(self, labels: list[str]) -> None:
        self.graph.update(zip(labels, labels[1:], strict=False))

    def reply(self, label: str, text: str) -> str:
        self.used.add(label)
        self.replies.setdefault(label, text)
        return label

    def edge(self, source: str, target: str) -> None:
        self.graph[source] = target


def _asks(chart: _Chart, low: int = 0) -> list[str]:
    return [chart.label() for _ in range(chart.draw(st.integers(low, 4)))]


def _close(chart: _Chart, last: str) -> None:
    """A result reply after ``last``, and maybe ``anything_else`` after that."""
    if chart.draw(st.booleans()):
        result = chart.label("inform")
        chart.edge(last, result)
        if chart.draw(st.booleans()):
            chart.edge(result, chart.reply("anything_else", "Anything else?"))


def _outcome(chart: _Chart, pair: tuple[str, str]) -> tuple[str, str]:
    good, bad = chart.label("inform"), chart.label("inform")
    chart.edge(chart.reply(pair[0], pair[0].title()), good)
    chart.edge(chart.reply(pair[1], pair[1].title()), bad)
    return good, bad


def _linear(chart: _Chart, asks: list[str]) -> None:
    chart.chain(["hello", *asks, chart.reply("query", "Query")])
    _close(chart, "query")


def _with_outcome(chart: _Chart, asks: list[str]) -> None:
    chart.chain(["hello", *asks, chart.reply("query", "Query")])
    good, _ = _outcome(chart, chart.draw(st.sampled_from(OUTCOME_PAIRS)))
    _close(chart, good)


def _check_book(chart: _Chart, asks: list[str]) -> None:
    check = chart.reply("query_check", "Query Check")
    book = chart.reply("query_book", "Query Book")
    chart.chain(["hello", *asks, check])
    confirm = chart.label("ask")
    chart.replies[confirm] = "It is available. Shall I book it for you?"
    chart.edge(chart.reply("available", "Available"), confirm)
    chart.edge(chart.reply("unavailable", "Unavailable"), chart.label("inform"))
    if chart.draw(st.booleans()):
        chart.edge(chart.reply("yes", "Yes"), book)
        back = chart.draw(st.sampled_from([*asks, chart.label("inform")]))
        chart.edge(chart.reply("no", "No"), back)  # a loop back to an earlier step
    else:
        chart.edge(confirm, book)  # the confirmation leads straight on, as party_plan
    done, _ = _outcome(chart, ("query_success", "query_failure"))
    _close(chart, done)


def _alternative(chart: _Chart, asks: list[str]) -> None:
    query = chart.reply("query", "Query")
    chart.chain(["hello", *asks, query])
    words = " or ".join(a.replace("_", " ") for a in asks[-2:]) or "anything"
    branch = chart.reply("info_missing", f"Info missing. Can't remember {words}")
    chart.chain([branch, *_asks(chart, 1), query])
    if chart.draw(st.booleans()):
        refused = chart.label("inform")
        chart.edge(chart.reply("info_missing2", "Info missing. Can't remember it"), refused)
    good, _ = _outcome(chart, ("query_success", "query_failure"))
    _close(chart, good)


def _search(chart: _Chart, asks: list[str]) -> None:
    criteria = chart.label("inform")
    chart.chain(["hello", *asks, criteria, chart.reply("query", "Query")])
    result, more = chart.label("inform"), chart.label("ask")
    chart.chain(["query", result, more])
    chart.edge(chart.reply("yes", "Yes"), criteria)
    chart.edge(chart.reply("no", "No"), chart.reply("goodbye_1", "Thank you and goodbye."))


def _multi_query(chart: _Chart, asks: list[str]) -> None:
    kinds = chart.draw(st.lists(WORD, min_size=2, max_size=3, unique=True))
    queries = [chart.reply(f"query_{k}", f"Query {k}") for k in kinds]
    path = ["hello", *asks]
    for query in queries:
        path += [query, *_asks(chart)]
    chart.chain(path)
    _close(chart, path[-1])


def _unplaced(chart: _Chart, asks: list[str]) -> None:
    chart.chain(["hello", *(asks or [chart.label()])])
    chart.reply(chart.draw(st.sampled_from(["query", "query_check"])), "Query")


_BUILDERS = {
    "linear": _linear,
    "outcome": _with_outcome,
    "check_book": _check_book,
    "alternative": _alternative,
    "search": _search,
    "multi_query": _multi_query,
    "unplaced": _unplaced,
}


def _extras(chart: _Chart) -> None:
    """Replies the graph never places, a stray branch label, and the shared replies."""
    for _ in range(chart.draw(st.integers(0, 3))):
        chart.label(chart.draw(st.sampled_from(["ask", "inform"])))
    if chart.draw(st.integers(0, 3)) == 0 and "no" not in chart.graph:
        chart.edge(chart.reply("no", "No"), chart.label("inform"))  # nothing leads to it
    chart.reply("anything_else", "Is there anything else that I can do for you?")
    chart.reply("out_of_scope", "I am sorry, I don't quite understand what you mean.")
    if chart.draw(st.booleans()):
        chart.reply("goodbye_1", "Thank you and goodbye.")


@st.composite
def flowchart(draw: Draw[Any], name: str, shape: str) -> Raw:
    """``tasks/<name>.json`` of one shape (its ``task`` field need not be ``name``)."""
    chart = _Chart(draw, draw(st.one_of(WORD, st.just(name))))
    _BUILDERS[shape](chart, _asks(chart))
    _extras(chart)
    order = draw(st.permutations(list(chart.replies)))
    return {
        "task": draw(st.one_of(st.just(name), TASK_NAME)),
        "replies": {k: chart.replies[k] for k in order},
        "graph": chart.graph,
    }


@st.composite
def tasks(draw: Draw[Any], max_tasks: int = 3) -> list[Task]:
    """One to ``max_tasks`` tasks with distinct names, some without an API schema file."""
    names = draw(st.lists(TASK_NAME, min_size=1, max_size=max_tasks, unique=True))
    out: list[Task] = []
    for name in names:
        shape = draw(st.sampled_from(SHAPES))
        chart = draw(flowchart(name, shape))
        fields = draw(inputs("query_book" in chart["replies"]))
        others = [n for n in names if n != name]
        written = draw(st.sampled_from([True, True, False]))
        api = draw(api_schema(name, fields, others)) if written else None
        out.append(Task(name, chart, api, fields, shape))
    return out


# --- beyond the format ---------------------------------------------------------------------

_LOOSE_LABELS = ["", "hello", "yes", "available", "query_success", "custom", "anything_else"]


@st.composite
def loosen(draw: Draw[Any], task: Task) -> Task:
    """The task with a flowchart and an API schema no real task has.

    The flowchart may lose ``hello``, name labels without a reply, loop, lead back to
    ``hello``, use a branch or shared label as a step, or have no graph; the schema may
    require an input it does not list and list one without a name.
    """
    graph, replies = dict(task.graph), dict(task.replies)
    labels = list(dict.fromkeys([x for kv in graph.items() for x in kv])) or ["hello"]
    for _ in range(draw(st.integers(1, 3))):
        change = draw(st.integers(0, 6))
        if change == 0:
            graph.pop("hello", None)
        elif change == 1:
            graph[draw(st.sampled_from(labels))] = draw(step_label("ghost"))  # no reply
        elif change == 2:
            graph[draw(st.sampled_from(labels))] = draw(st.sampled_from(labels))  # a cycle
        elif change == 3:
            label = draw(st.sampled_from(_LOOSE_LABELS))
            graph[draw(st.sampled_from(labels))] = label
            graph.setdefault(label, draw(st.sampled_from(labels)))
        elif change == 4:
            graph = {}
        elif change == 5:
            replies = {}
        else:
            replies[draw(st.sampled_from(labels))] = draw(TEXT)
    chart = {**task.flowchart, "graph": graph, "replies": replies}
    if draw(st.integers(0, 5)) == 0:
        chart = {k: v for k, v in chart.items() if k != draw(st.sampled_from(list(chart)))}
    api = task.api
    if api is not None and draw(st.booleans()):
        api = {
            **api,
            "required": [*api["required"], draw(FIELD_NAME)],  # an input the schema lacks
            "input": [*api["input"], {"Type": "ShortString"}],  # an input without a name
            "function": draw(st.sampled_from([None, "", task.name, "generic_sample"])),
        }
    return Task(task.name, chart, api, task.inputs, "loose")
