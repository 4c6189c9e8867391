"""STAR's file format as the replay reads it, checked as it is read (``StarFormatError``).

A flowchart, an API schema and each dialogue line must be JSON objects whose fields, where
present, have STAR's types: a ``graph`` and ``replies`` of strings, a list of events each an
object, constraints as objects, an item as an object. A field may be missing (the replay reads
what is there); one of the wrong type stops the replay with the file, the line and the place,
never a traceback.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast

from pydantic import TypeAdapter, ValidationError

from pipecat_steward.replay.format_errors import validation_message

__all__ = ["StarFormatError", "read_lines", "read_object"]


class StarFormatError(ValueError):
    """A STAR file cannot be read as STAR's format says; the message names the file and place."""


class _Flowchart(TypedDict):
    graph: NotRequired[dict[str, str]]
    replies: NotRequired[dict[str, str]]


class _Api(TypedDict):
    function: NotRequired[str | None]  # null or empty: the task's own name
    input: NotRequired[list[dict[str, Any]]]
    required: NotRequired[list[str]]


class _Capability(TypedDict):
    Task: str


class _Scenario(TypedDict):
    Happy: NotRequired[bool]
    WizardCapabilities: NotRequired[list[_Capability]]


class _Event(TypedDict):
    # A null text or name reads as a missing one.
    Agent: NotRequired[str | None]
    Action: NotRequired[str | None]
    Text: NotRequired[str | None]
    ActionLabel: NotRequired[str | None]
    APIName: NotRequired[str | None]
    Constraints: NotRequired[list[dict[str, Any]]]
    Item: NotRequired[dict[str, Any] | None]


class _Dialogue(TypedDict):
    DialogueID: NotRequired[Any]
    Scenario: NotRequired[_Scenario]
    Events: NotRequired[list[_Event]]


FileKind = Literal["flowchart", "api"]
"""The JSON object files of a STAR folder: ``tasks/*.json`` and ``apis/*.json``."""

_KINDS: dict[FileKind, TypeAdapter[Any]] = {
    "flowchart": TypeAdapter(_Flowchart),
    "api": TypeAdapter(_Api),
}
_DIALOGUE = TypeAdapter(_Dialogue)


def read_object(path: Path, kind: FileKind) -> dict[str, Any]:
    """A flowchart or an API schema file, as written (every field kept), once checked."""
    try:
        data = json.loads(path.read_bytes())
    except ValueError as exc:  # JSON and UTF-8 errors
        raise StarFormatError(f"{path}: not readable as JSON ({exc})") from None
    try:
        _KINDS[kind].validate_python(data)
    except ValidationError as exc:
        raise StarFormatError(validation_message(str(path), exc)) from None
    return cast(dict[str, Any], data)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The dialogue on each non-blank line of a ``.jsonl.gz`` file, with the fields read."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield _dialogue(line, f"{path}, line {number}")
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # no gzip, cut short, not UTF-8
        raise StarFormatError(f"{path}: not readable as gzipped JSON lines ({exc})") from None


def _dialogue(line: str, source: str) -> dict[str, Any]:
    try:
        return cast(dict[str, Any], _DIALOGUE.validate_json(line))
    except ValidationError as exc:
        raise StarFormatError(validation_message(source, exc)) from None
