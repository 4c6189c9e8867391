"""Reading a STAR folder: task flowcharts, API schemas and dialogues.

STAR (Mosig, Mehri, Kober, 2020; MIT) gives per task a flowchart (``tasks/<task>.json``:
``replies`` maps each wizard action label to its template, ``graph`` maps a label to the
label that follows it) and an API schema (``apis/<task>.json``). Each dialogue (one JSON
object a line in ``dialogues_*.jsonl.gz``) has a ``Scenario`` (``Happy``,
``WizardCapabilities``) and ``Events``. This module keeps the events the replay reads: user
``utter``, wizard ``pick_suggestion`` (its ``ActionLabel``), wizard free-text ``utter``, wizard
``query`` (``APIName``,
``Constraints``) and knowledge-base ``return_item``.

Every action label, in a flowchart or a dialogue, is read as a step id (:func:`step_id`): the
engine's step ids are ASCII identifiers, and one mapping applied wherever a label is read keeps a
picked label, its template and its step the same name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pipecat_steward.replay.star_format import StarFormatError, read_lines, read_object

__all__ = [
    "Event",
    "StarDialogue",
    "StarFormatError",
    "constraint_values",
    "flowchart_graph",
    "flowchart_replies",
    "heard",
    "load_apis",
    "load_dialogues",
    "load_tasks",
    "parse_dialogue",
    "step_id",
]

EventKind = Literal["utter", "pick", "say", "query", "result"]


@dataclass(frozen=True, slots=True)
class Event:
    """One replayed event.

    Attributes:
        kind: ``utter`` (user), ``pick`` (wizard label), ``say`` (wizard free text),
            ``query`` (wizard API call) or ``result`` (the knowledge base's answer).
        label: The picked action label as a step id (``pick``; see :func:`step_id`).
        text: The words (``utter`` and ``say``).
        api: The API name (``query`` and ``result``).
        constraints: Field → raw constraint text (``query``).
        item: The returned item, None when nothing matched (``result``).
    """

    kind: EventKind
    label: str = ""
    text: str = ""
    api: str = ""
    constraints: Mapping[str, str] | None = None
    item: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class StarDialogue:
    """A dialogue's id, scenario and replayed events.

    ``drafts`` pairs each text a wizard typed before asking for suggestions (its last one)
    with the label the wizard then picked: labelled paraphrases that measure the echo rule.
    """

    dialogue_id: str
    happy: bool
    tasks: tuple[str, ...]
    events: tuple[Event, ...]
    drafts: tuple[tuple[str, str], ...] = ()


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def step_id(label: str) -> str:
    """The step id of an action label: the label itself when it is an ASCII identifier.

    Any other label (``2nd_ask``, ``ask-name``, ``météo``, the empty label) becomes ``_``, its
    identifier characters (others as ``_``) and a short hash of the whole label, so two labels
    never share an id (``ask-name`` is not ``ask_name``) and an id maps to itself.
    """
    if _IDENTIFIER.fullmatch(label):
        return label
    digest = hashlib.blake2s(label.encode("utf-8"), digest_size=3).hexdigest()
    return f"_{re.sub(r'[^A-Za-z0-9_]', '_', label)}_{digest}"


def flowchart_replies(flowchart: Mapping[str, Any]) -> dict[str, str]:
    """A flowchart's ``replies``: step id → template."""
    return {step_id(str(k)): str(v) for k, v in flowchart.get("replies", {}).items()}


def flowchart_graph(flowchart: Mapping[str, Any]) -> dict[str, str]:
    """A flowchart's ``graph``: step id → the step id that follows it."""
    return {step_id(str(k)): step_id(str(v)) for k, v in flowchart.get("graph", {}).items()}


def load_tasks(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every ``tasks/<task>.json`` flowchart (response-template files are skipped), by task."""
    folder = data_dir / "tasks"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing; --data must be a STAR folder")
    return {
        p.stem: read_object(p, "flowchart")
        for p in sorted(folder.glob("*.json"))
        if not p.name.endswith(".responses.json")
    }


def load_apis(data_dir: Path) -> dict[str, dict[str, Any]]:
    """Every ``apis/<task>.json`` schema, by task (empty when the folder is absent)."""
    folder = data_dir / "apis"
    return {p.stem: read_object(p, "api") for p in sorted(folder.glob("*.json"))}


def parse_dialogue(raw: Mapping[str, Any]) -> StarDialogue:
    """Keep the events the replay reads from one raw STAR dialogue."""
    scenario = cast(Mapping[str, Any], raw.get("Scenario", {}))
    tasks = tuple(str(c["Task"]) for c in scenario.get("WizardCapabilities", []))
    events = [e for e in (_event(x) for x in raw.get("Events", [])) if e is not None]
    return StarDialogue(
        str(raw.get("DialogueID")),
        bool(scenario.get("Happy")),
        tasks,
        tuple(events),
        _drafts(raw.get("Events", [])),
    )


def _drafts(raw_events: list[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    """(the wizard's last draft, the label picked right after it) pairs."""
    out: list[tuple[str, str]] = []
    draft = ""
    for e in raw_events:
        if e.get("Agent") != "Wizard":
            continue
        action = e.get("Action")
        if action == "request_suggestions":
            draft = str(e.get("Text") or "").strip() or draft
            continue
        if action == "pick_suggestion" and draft:
            out.append((draft, step_id(str(e.get("ActionLabel") or ""))))
        draft = ""
    return tuple(out)


def _event(raw: Mapping[str, Any]) -> Event | None:
    agent, action = raw.get("Agent"), raw.get("Action")
    if agent == "User" and action == "utter":
        return Event("utter", text=str(raw.get("Text") or ""))
    if agent == "Wizard" and action == "utter":
        return Event("say", text=str(raw.get("Text") or ""))
    if agent == "Wizard" and action == "pick_suggestion":
        return Event("pick", label=step_id(str(raw.get("ActionLabel") or "")))
    if agent == "Wizard" and action == "query":
        pairs = [(str(k), str(v)) for c in raw.get("Constraints", []) for k, v in c.items()]
        return Event("query", api=str(raw.get("APIName") or ""), constraints=dict(pairs))
    if action == "return_item":
        item = raw.get("Item")
        return Event("result", api=str(raw.get("APIName") or ""), item=item or None)
    return None


def load_dialogues(data_dir: Path) -> Iterator[StarDialogue]:
    """Every dialogue of every ``dialogues_*.jsonl.gz`` in the folder, in file order."""
    files = sorted(data_dir.glob("dialogues_*.jsonl.gz"))
    if not files:
        raise FileNotFoundError(f"no dialogues_*.jsonl.gz in {data_dir}")
    for path in files:
        for raw in read_lines(path):
            yield parse_dialogue(raw)


_QUOTED = re.compile(r'"([^"]+)"')


def constraint_values(raw: str) -> tuple[str, ...]:
    """The literal values a constraint names, lower-cased.

    ``"Tuesday"`` and ``api.is_equal_to("Raining")`` give one each; a bare number gives
    itself; booleans give none.
    """
    quoted = _QUOTED.findall(raw)
    values = quoted if quoted else [raw.strip()]
    return tuple(v.strip().lower() for v in values if v.strip().lower() not in ("true", "false"))


_ORDINAL = re.compile(r"^(\d+)(st|nd|rd|th)?$")
_CLOCK = re.compile(r"^(\d+)\s*(am|pm)$")


def _patterns(value: str) -> list[str]:
    if m := _ORDINAL.match(value):
        number = int(m.group(1))
        pats = [rf"\b{number}(st|nd|rd|th)?\b"]
        if 12 < number < 24:  # an hour on the 24-hour clock is usually said on the 12-hour one
            pats.append(rf"\b{number - 12}(:00)?\s*(pm|p\.m)")
        return pats
    if m := _CLOCK.match(value):
        return [rf"\b{m.group(1)}(:00)?\s*{m.group(2)[0]}\.?m\b"]
    words = value.split()
    return [r"\b" + r"\s+".join(re.escape(w) for w in words) + r"\b"] if len(value) > 1 else []


def _most_words(value: str, lowered: str) -> bool:
    """Whether more than half of a multi-word value's longer words occur.

    ``Center Apartments`` is heard for ``One on Center Apartments``.
    """
    words = [w for w in re.findall(r"[a-z0-9]+", value) if len(w) > 2]
    if len(words) < 2:
        return False
    found = sum(1 for w in words if re.search(rf"\b{re.escape(w)}\b", lowered))
    return found * 2 > len(words)


def heard(raw: str, lowered: str) -> bool:
    """Whether a constraint's value occurs in lower-cased text.

    As whole words; an ordinal or number with or without its suffix; an hour after noon also
    on the 12-hour clock; a clock time with or without ``:00`` and spaces; a multi-word value
    by most of its words.
    """
    return any(
        _most_words(v, lowered) or any(re.search(p, lowered) for p in _patterns(v))
        for v in constraint_values(raw)
    )
