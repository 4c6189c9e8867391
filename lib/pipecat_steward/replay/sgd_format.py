"""SGD's file format as the replay reads it, checked as it is read (``SgdFormatError``).

A split from elsewhere (a truncated download, a converted variant, a hand-edited schema) must
stop the replay with the file, the place in it and what is wrong, never with a traceback or,
worse, a quiet misreading (a value read letter by letter, a turn of an unknown speaker
skipped). Every file is checked whole as it is read, each problem of a file in one message.
Dialogue files are parsed and checked in one pass by pydantic, which keeps only the fields the
replay reads: that is quicker than ``json.loads`` alone on SGD's files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypedDict, cast

from pydantic import Field, TypeAdapter, ValidationError

from pipecat_steward.replay.format_errors import validation_message

__all__ = [
    "SgdFormatError",
    "check_schema",
    "read_dialogues",
    "unknown_services",
]


class SgdFormatError(ValueError):
    """A split's file is not in SGD's format; the message says where and what."""


_Name = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
"""A service, slot or intent name: SGD's are identifiers, and the replay's flows need them so."""


class _Slot(TypedDict):
    name: _Name
    description: NotRequired[str]


class _Intent(TypedDict):
    name: _Name
    is_transactional: NotRequired[bool]
    required_slots: list[str]
    optional_slots: dict[str, str]


class _Service(TypedDict):
    service_name: _Name
    slots: list[_Slot]
    intents: list[_Intent]


class _Action(TypedDict):
    act: str
    slot: str
    values: list[str]
    canonical_values: list[str]


class _State(TypedDict):
    active_intent: str
    slot_values: dict[str, Annotated[list[str], Field(min_length=1)]]  # the spoken variants


class _Call(TypedDict):
    method: str
    parameters: dict[str, str]


class _Frame(TypedDict):
    service: str
    actions: list[_Action]
    state: NotRequired[_State]
    service_call: NotRequired[_Call]


class _Turn(TypedDict):
    speaker: Literal["USER", "SYSTEM"]
    utterance: str
    frames: list[_Frame]


class _Dialogue(TypedDict):
    dialogue_id: str
    services: list[str]
    turns: list[_Turn]


_SCHEMA = TypeAdapter(list[_Service])
_DIALOGUES = TypeAdapter(list[_Dialogue])


def check_schema(raw: object, source: str) -> list[dict[str, Any]]:
    """The services of a ``schema.json`` as read (every field kept), or ``SgdFormatError``.

    Besides the shape: service names are unique, and every slot an intent requires or makes
    optional is a slot of its service.
    """
    try:
        services = _SCHEMA.validate_python(raw)
    except ValidationError as exc:
        raise SgdFormatError(validation_message(source, exc, "service")) from None
    problems = [*_duplicates(services), *(p for s in services for p in _unknown_slots(s))]
    if problems:
        raise SgdFormatError(f"{source}: " + "; ".join(problems))
    return cast(list[dict[str, Any]], raw)  # validated above: a list of mappings


def read_dialogues(text: str | bytes, source: str) -> list[dict[str, Any]]:
    """The dialogues of one ``dialogues_*.json`` text with the fields the replay reads.

    Raises ``SgdFormatError`` for text that is no JSON, or no list of SGD dialogues; a USER
    frame must carry a ``state``, which SYSTEM frames need not.
    """
    try:
        dialogues = _DIALOGUES.validate_json(text)
    except ValidationError as exc:
        raise SgdFormatError(validation_message(source, exc, "dialogue")) from None
    for index, dialogue in enumerate(dialogues):
        for turn_index, turn in enumerate(dialogue["turns"]):
            for at, frame in enumerate(turn["frames"]):
                if turn["speaker"] == "USER" and "state" not in frame:
                    where = f"dialogue {index}: turns.{turn_index}.frames.{at}"
                    raise SgdFormatError(f"{source}: {where}: a USER frame needs a `state`")
    return cast(list[dict[str, Any]], dialogues)


def unknown_services(
    dialogue_id: str, services: Iterable[str], schema: Mapping[str, object]
) -> SgdFormatError | None:
    """``SgdFormatError`` when a dialogue uses a service the split's schema does not define."""
    missing = sorted(set(services) - schema.keys())
    if not missing:
        return None
    return SgdFormatError(
        f"dialogue {dialogue_id} uses {', '.join(missing)}, which schema.json does not define "
        f"(it defines {', '.join(sorted(schema)) or 'no service'}): replay it with its schema"
    )


def _duplicates(services: Sequence[_Service]) -> list[str]:
    names = [s["service_name"] for s in services]
    twice = sorted({n for n in names if names.count(n) > 1})
    return [f"service {name} is defined twice" for name in twice]


def _unknown_slots(service: _Service) -> list[str]:
    slots = {s["name"] for s in service["slots"]}
    return [
        f"service {service['service_name']}: intent {i['name']} names slot {slot}, which the "
        "service does not define"
        for i in service["intents"]
        for slot in [*i["required_slots"], *i["optional_slots"]]
        if slot not in slots
    ]
