"""Which API fields each ask or inform step collects: from the dialogues, else from the schema.

The flowchart names its steps (``weather_ask_location``) but not the API fields they fill
(``City``). Two generic sources:

Only steps no query precedes collect inputs (:func:`collecting`); the step's own words decide
when they name exactly one field, else the measured field, else the named ties.

- *Measured* (:func:`bind_fields`): each time the wizard picks an ask step and the user
  answers, every field of that task's next query whose value is heard in the answer scores a
  hit. A step is bound to its best field when that field was heard in at least ``MIN_SHARE``
  of the answers and at least ``MIN_HITS`` times; a field goes to one step only, the one
  whose answers carry it most often.
- *Named* (:func:`schema_fields`): the fields whose name words (from ``Name`` and
  ``ReadableName``, less generic words such as ``name``) occur most often in the step's label
  (less the words half the task's labels share, such as ``weather``) and template, e.g. ``ride_inform_search_criteria`` ("filter for service provider, driver name
  and the car's model") names ``ServiceProvider``, ``DriverName`` and ``CarModel``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from pipecat_steward.replay.star_compile import StarProcedure
from pipecat_steward.replay.star_data import StarDialogue, heard
from pipecat_steward.replay.star_evidence import next_query_values

__all__ = [
    "MIN_HITS",
    "MIN_SHARE",
    "bind_fields",
    "collecting",
    "criteria_fields",
    "schema_fields",
]

MIN_SHARE = 0.3
MIN_HITS = 3
MIN_INFORM_SHARE = 0.1
_GENERIC = frozenset({"name", "the", "of", "id", "has", "does", "num", "is", "a"})


def _words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in re.findall(r"[a-z]+", spaced)}


def schema_fields(
    proc: StarProcedure, replies: Mapping[str, str], api: Mapping[str, object]
) -> dict[str, tuple[str, ...]]:
    """Step label → the input fields its label and template name most (ties kept)."""
    fields = [f for f in api.get("input", []) if isinstance(f, dict)]  # type: ignore[union-attr]
    out: dict[str, tuple[str, ...]] = {}
    labels = [_words(label.replace("_", " ")) for label in proc.steps]
    common = Counter(w for words in labels for w in words)
    domain = {w for w, n in common.items() if n * 2 >= len(labels)}  # the task's own prefix
    for label in collecting(proc):
        text = (_words(label.replace("_", " ")) | _words(replies.get(label, ""))) - domain
        scored: list[tuple[int, str]] = []
        for f in fields:
            name = str(f.get("Name", ""))
            words = (_words(name) | _words(str(f.get("ReadableName", "")))) - _GENERIC
            scored.append((len(words & text), name))
        top = max((s for s, _ in scored), default=0)
        floor = 1 if proc.steps[label].kind == "inform" else top  # an inform may list many
        if top:
            out[label] = tuple(n for s, n in scored if s >= floor)
    return out


def criteria_fields(
    proc: StarProcedure, fields: Mapping[str, tuple[str, ...]], api: Mapping[str, object]
) -> dict[str, tuple[str, ...]]:
    """Widen each criteria list to every input when the API requires none.

    An inform step bound to several fields lists what the caller may search by; when the
    API schema says no input is required (``required: []``), any input the caller gives
    answers it, whether or not the template names it (a price when it lists name, place and
    food).
    """
    required = api.get("required")
    inputs = [str(f.get("Name")) for f in api.get("input", []) if isinstance(f, dict)]  # type: ignore[union-attr]
    if required != [] or not inputs:
        return dict(fields)
    informs = {label for label, step in proc.steps.items() if step.kind == "inform"}
    return {
        label: tuple(inputs) if label in informs and len(got) > 1 else got
        for label, got in fields.items()
    }


def collecting(proc: StarProcedure) -> list[str]:
    """The ask and inform steps no query precedes: only they can collect a query's inputs.

    Steps after a query report its result or ask for consent.
    """
    queries = set(proc.queries)
    return [
        label
        for label, step in proc.steps.items()
        if step.kind != "query" and not queries & set(proc.procs.ancestors[label])
    ]


def bind_fields(
    procs: Mapping[str, StarProcedure],
    apis: Mapping[str, set[str]],
    dialogues: Iterable[StarDialogue],
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Task → ask label → the API field its answers carry (measured; one field each)."""
    hits, asked = _tally(procs, apis, dialogues)
    return {task: _best(hits[task], asked[task], _asks(proc)) for task, proc in procs.items()}


def _tally(
    procs: Mapping[str, StarProcedure],
    apis: Mapping[str, set[str]],
    dialogues: Iterable[StarDialogue],
) -> tuple[dict[str, Counter[tuple[str, str]]], dict[str, Counter[str]]]:
    """Per task: how often each (label, field) pair was heard, and how often each label was asked."""
    hits: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    asked: dict[str, Counter[str]] = defaultdict(Counter)
    for dialogue in dialogues:
        for task in dict.fromkeys(dialogue.tasks):
            if task in procs:
                _score(procs[task], apis.get(task, {task}), dialogue, hits[task], asked[task])
    return hits, asked


def _asks(proc: StarProcedure) -> set[str]:
    return {label for label in collecting(proc) if proc.steps[label].kind == "ask"}


def _score(
    proc: StarProcedure,
    apis: set[str],
    dialogue: StarDialogue,
    hits: Counter[tuple[str, str]],
    asked: Counter[str],
) -> None:
    upcoming = next_query_values(dialogue.events, apis)
    asks = set(collecting(proc))
    waiting: list[str] = []
    for i, event in enumerate(dialogue.events):
        if event.kind == "pick" and event.label in asks:
            waiting.append(event.label)
        elif event.kind == "utter" and waiting:
            text = event.text.lower()
            for label in waiting:
                asked[label] += 1
                for name, raw in upcoming[i].items():
                    hits[(label, name)] += heard(raw, text)
            waiting = []


def _best(
    hits: Counter[tuple[str, str]], asked: Counter[str], asks: set[str]
) -> dict[str, tuple[str, ...]]:
    share = {
        key: n / asked[key[0]]
        for key, n in hits.items()
        if key[0] in asks and n >= MIN_HITS and n >= MIN_SHARE * asked[key[0]]
    }
    out: dict[str, tuple[str, ...]] = {}
    taken: set[str] = set()
    for (label, name), _ in sorted(share.items(), key=lambda kv: -kv[1]):
        if label not in out and name not in taken:
            out[label] = (name,)
            taken.add(name)
    return out


def bind_inform_fields(
    procs: Mapping[str, StarProcedure],
    apis: Mapping[str, set[str]],
    dialogues: Iterable[StarDialogue],
) -> dict[str, dict[str, tuple[str, ...]]]:
    """Task → inform label → every field heard in enough of the answers to it.

    An inform that lists search criteria is answered with any of them, so every field heard in
    at least ``MIN_INFORM_SHARE`` of the answers (and ``MIN_HITS`` times) counts.
    """
    hits, asked = _tally(procs, apis, dialogues)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for task, proc in procs.items():
        informs = [x for x in collecting(proc) if proc.steps[x].kind == "inform"]
        out[task] = {
            label: names
            for label in informs
            if (
                names := tuple(
                    n
                    for (lb, n), c in sorted(hits[task].items())
                    if lb == label and c >= MIN_HITS and c >= MIN_INFORM_SHARE * asked[task][label]
                )
            )
        }
    return out
