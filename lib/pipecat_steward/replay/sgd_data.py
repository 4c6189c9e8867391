"""Reading a Schema-Guided Dialogue (SGD) split folder into gold turns.

SGD (Rastogi et al., AAAI 2020; CC BY-SA 4.0) gives, per user turn and service frame, the
cumulative ``slot_values`` (each a list of spoken variants of one value) and, in the system turn
that follows, an optional ``service_call`` with canonical parameters. This module turns that
into ``GoldTurn`` values whose slot values are canonical strings, so a value that the caller
merely re-phrased (``"half past 11 in the morning"`` → ``"11:30 am"``) is not a change.

Multi-value rule: a gold list holds variants of one value. Each variant is mapped to its
canonical form (from the dialogue's actions: same service and slot first, then any action with
that surface form, else the variant itself). When the variants share one canonical form it is the
value; when they disagree, the previous value is kept if it is among them, else the canonical
form of the first variant is taken (``Dialogue.multi_valued`` counts such lists).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pipecat_steward.replay.sgd_format import SgdFormatError, check_schema, read_dialogues

__all__ = [
    "Dialogue",
    "GoldCall",
    "GoldFrame",
    "GoldTurn",
    "load_dialogues",
    "load_schema",
    "parse_dialogue",
    "read_json",
]

NO_INTENT = "NONE"


@dataclass(frozen=True, slots=True)
class GoldCall:
    """A service call the gold system made right after a user turn."""

    service: str
    method: str
    parameters: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class GoldFrame:
    """One service's gold state after a user turn.

    Attributes:
        service: The SGD service name.
        intent: The active intent (``NONE`` when there is none).
        values: Slot → canonical value.
        accepted: Slot → every form that counts as right (variants and their canonical forms).
        acts: The caller's dialogue acts in this frame (``INFORM``, ``AFFIRM``, ``NEGATE`` …).
    """

    service: str
    intent: str
    values: Mapping[str, str]
    accepted: Mapping[str, frozenset[str]]
    acts: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class GoldTurn:
    """A user turn: its words, its frames and the service calls of the next system turn."""

    index: int
    utterance: str
    frames: tuple[GoldFrame, ...]
    calls: tuple[GoldCall, ...]
    offered: str = ""
    """What the system said just before (a bare yes accepts what it offered)."""
    offered_intents: tuple[str, ...] = ()
    """The intents the system offered just before (its ``OFFER_INTENT`` acts): its words describe
    an intent ("shall I book it?") and rarely name it."""


@dataclass(frozen=True, slots=True)
class Dialogue:
    """A parsed SGD dialogue."""

    dialogue_id: str
    services: tuple[str, ...]
    turns: tuple[GoldTurn, ...]
    multi_valued: int = 0


def read_json(path: Path) -> Any:
    """Read a ``.json`` or ``.json.gz`` file (``SgdFormatError`` when it holds no JSON)."""
    try:
        return json.loads(_read_bytes(path))
    except ValueError as exc:  # JSON and UTF-8 errors
        raise SgdFormatError(f"{path}: not readable as JSON ({exc})") from None


def _read_bytes(path: Path) -> bytes:
    """The bytes of a file, unzipped when it is a ``.gz`` (``SgdFormatError`` if it is no gzip)."""
    if path.suffix != ".gz":
        return path.read_bytes()
    try:
        return gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:  # not a gzip file, or one cut short
        raise SgdFormatError(f"{path}: not readable as gzip ({exc})") from None


def _split_file(split_dir: Path, stem: str) -> Path:
    for name in (f"{stem}.json", f"{stem}.json.gz"):
        if (split_dir / name).is_file():
            return split_dir / name
    raise FileNotFoundError(f"no {stem}.json[.gz] in {split_dir}")


def load_schema(split_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Return the split's services by name from ``schema.json[.gz]``."""
    path = _split_file(Path(split_dir), "schema")
    return {s["service_name"]: s for s in check_schema(read_json(path), str(path))}


def load_dialogues(split_dir: str | os.PathLike[str]) -> Iterator[Dialogue]:
    """Yield every dialogue of the split's ``dialogues_*.json[.gz]`` files, in file order."""
    split_dir = Path(split_dir)
    paths = sorted(p for p in split_dir.glob("dialogues_*.json*") if p.suffix in (".json", ".gz"))
    if not paths:
        raise FileNotFoundError(f"no dialogues_*.json[.gz] in {split_dir}")
    for path in paths:
        for raw in read_dialogues(_read_bytes(path), str(path)):
            yield parse_dialogue(raw)


@dataclass
class _Canon:
    exact: dict[tuple[str, str, str], str] = field(default_factory=lambda: {})
    surface: dict[str, str] = field(default_factory=lambda: {})

    def of(self, service: str, slot: str, variant: str) -> str:
        key = (service, slot, variant)
        return self.exact.get(key) or self.surface.get(variant) or variant


def _canon(turns: Iterable[Mapping[str, Any]]) -> _Canon:
    canon = _Canon()
    for turn in turns:
        for frame in turn["frames"]:
            for act in frame["actions"]:
                for variant, value in zip(act["values"], act["canonical_values"], strict=False):
                    canon.exact[(frame["service"], act["slot"], variant)] = value
                    canon.surface.setdefault(variant, value)
    return canon


def parse_dialogue(raw: Mapping[str, Any]) -> Dialogue:
    """Turn one raw SGD dialogue into gold turns with canonical values."""
    turns = cast(list[dict[str, Any]], raw["turns"])
    canon = _canon(turns)
    previous: dict[str, dict[str, str]] = {}
    gold: list[GoldTurn] = []
    multi = 0
    for i, turn in enumerate(turns):
        if turn["speaker"] != "USER":
            continue
        frames: list[GoldFrame] = []
        for frame in turn["frames"]:
            parsed, conflicts = _frame(canon, frame, previous.get(frame["service"], {}))
            previous[parsed.service] = dict(parsed.values)
            frames.append(parsed)
            multi += conflicts
        calls = _calls(turns[i + 1]) if i + 1 < len(turns) else ()
        offered = str(turns[i - 1].get("utterance", "")) if i else ""
        intents = _offered_intents(turns[i - 1]) if i else ()
        gold.append(GoldTurn(i, str(turn["utterance"]), tuple(frames), calls, offered, intents))
    return Dialogue(str(raw["dialogue_id"]), tuple(raw["services"]), tuple(gold), multi)


def _frame(
    canon: _Canon, frame: Mapping[str, Any], before: Mapping[str, str]
) -> tuple[GoldFrame, int]:
    service = str(frame["service"])
    state = frame["state"]
    values: dict[str, str] = {}
    accepted: dict[str, frozenset[str]] = {}
    conflicts = 0
    for slot, variants in cast(dict[str, list[str]], state["slot_values"]).items():
        forms = [canon.of(service, slot, v) for v in variants]
        distinct = list(dict.fromkeys(forms))
        conflicts += len(distinct) > 1
        values[slot] = before[slot] if before.get(slot) in distinct else distinct[0]
        accepted[slot] = frozenset([*variants, *forms])
    acts = frozenset(str(a["act"]) for a in frame.get("actions", ()))
    return GoldFrame(service, str(state["active_intent"]), values, accepted, acts), conflicts


def _offered_intents(turn: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(value)
        for frame in turn["frames"]
        for act in frame["actions"]
        if act["act"] == "OFFER_INTENT"
        for value in act["values"]
    )


def _calls(turn: Mapping[str, Any]) -> tuple[GoldCall, ...]:
    return tuple(
        GoldCall(f["service"], f["service_call"]["method"], dict(f["service_call"]["parameters"]))
        for f in turn["frames"]
        if "service_call" in f
    )
