"""Where a slot's value comes from, as typed values parsed once when the config is loaded.

Users write a slot's ``source`` as text (``user``, ``event``, ``announce``, ``task:<TaskName>``
or a list of them). The config model parses that text into these frozen values as it loads;
everything after (checks, compiler, engine, graph) reads the typed values and never the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, assert_never

__all__ = [
    "SOURCE_FIX",
    "AnnounceSource",
    "EventSource",
    "SlotSource",
    "SourceType",
    "TaskSource",
    "UserSource",
    "parse_source",
    "spelling",
    "takes",
    "task_of",
]

SOURCE_FIX = "use user, event, announce or task:<TaskName>"
"""How to write a source, for the errors that reject one."""

_TASK = re.compile(r"^task:([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass(frozen=True, slots=True)
class UserSource:
    """The caller gives the value, through the slot's setter tool."""

    kind: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class EventSource:
    """The session's event data gives the value, once, at its ``event_key``."""

    kind: Literal["event"] = "event"


@dataclass(frozen=True, slots=True)
class AnnounceSource:
    """Nothing to collect: the slot's message is spoken and the slot is done."""

    kind: Literal["announce"] = "announce"


@dataclass(frozen=True, slots=True)
class TaskSource:
    """A task's output fills the value.

    Attributes:
        task: The name of the task whose ``outputs`` fill the slot.
    """

    task: str
    kind: Literal["task"] = "task"


SlotSource = UserSource | EventSource | AnnounceSource | TaskSource
"""One source of a slot's value."""

_PLAIN: dict[str, SlotSource] = {
    "user": UserSource(),
    "event": EventSource(),
    "announce": AnnounceSource(),
}


def parse_source(text: str) -> SlotSource | None:
    """The source ``text`` names, or None when it names none (see ``SOURCE_FIX``)."""
    if text in _PLAIN:
        return _PLAIN[text]
    match = _TASK.match(text)
    return TaskSource(match.group(1)) if match else None


def spelling(source: SlotSource) -> str:
    """The source as users write it in ``agent.yaml``."""
    match source:
        case UserSource() | EventSource() | AnnounceSource():
            return source.kind
        case TaskSource(task=task):
            return f"task:{task}"
        case _:  # pragma: no cover - the union is closed
            assert_never(source)


SourceType = type[UserSource] | type[EventSource] | type[AnnounceSource] | type[TaskSource]
"""One member of the union, for ``takes``."""


def takes(sources: Iterable[SlotSource], kind: SourceType) -> bool:
    """True when one of ``sources`` is of ``kind`` (``takes(s, UserSource)``)."""
    return any(isinstance(s, kind) for s in sources)


def task_of(sources: Iterable[SlotSource]) -> str | None:
    """The task whose output fills the slot, if one of ``sources`` is a task."""
    return next((s.task for s in sources if isinstance(s, TaskSource)), None)
