"""The evidence ledger: bounded session memory the adherence check cites by id.

Three bounded sections, each entry with an evidence id (``e17``) and a source label:

- **utterances** (40): what the caller and the agent said;
- **observations** (32): compact tool outcomes and variable changes. A later read of the same
  tool and transaction replaces the earlier one (different transactions stay distinct); a
  later change of the same variable replaces its earlier fact;
- **application messages** (12): what the host application told the agent (a supervisor's
  decision, a payment notification), kept apart so a long caller exchange cannot push them out.

Variable changes render as platform facts in their own authoritative section; they are not
represented as authenticated external outcomes. Caller quotes never become application
evidence. Sensitive variables and credential-like fields never enter the ledger. Pure: every
function returns a new ledger; times are parameters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, cast

from pipecat_steward.core.procedures.outcome import classify_result, result_mapping

__all__ = [
    "MAX_MESSAGES",
    "MAX_OBSERVATIONS",
    "MAX_UTTERANCES",
    "EvidenceEntry",
    "EvidenceKind",
    "EvidenceLedger",
    "Speaker",
    "add_application",
    "add_tool_result",
    "add_utterance",
    "add_variable",
    "compact_result",
]

MAX_UTTERANCES = 40
MAX_OBSERVATIONS = 32
MAX_MESSAGES = 12
_TEXT_LIMIT = 500
_FIELD_LIMIT = 80
_MAX_FIELDS = 8
Speaker = Literal["caller", "agent"]
_OUTCOME_KEYS = frozenset(
    {
        "status",
        "success",
        "error",
        "error_code",
        "reason",
        "message",
        "total",
        "count",
        "component",
        "id",
        "receipt",
        "amount",
        "result",
    }
)
_CREDENTIAL = re.compile(
    r"pass(word|code|key)?|token|secret|api_?key|pin$|cvv|cvc|card_?number|pan$|ssn|otp|"
    r"credential|auth_?code|capture|directive|session_?key",
    re.I,
)
_CALLER_ORIGINS = frozenset({"caller", "user", "customer", "transcript"})
_SPACE = re.compile(r"\s+")


EvidenceKind = Literal["utterance", "tool", "variable", "application"]
"""What an evidence entry records."""


@dataclass(frozen=True, slots=True)
class EvidenceEntry:
    """One citable entry.

    Attributes:
        id: The evidence id the verdict cites (``e17``).
        kind: What it records.
        source: Its label: ``caller``, ``agent``, ``tool:<name>``, ``platform``,
            ``application:<origin>``.
        text: The compact content shown to the assessor.
        key: Replacement key of an observation (same tool + transaction, same variable).
        at: When it was recorded (seconds, as the caller's clock gave it).
    """

    id: str
    kind: EvidenceKind
    source: str
    text: str
    key: str = ""
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class EvidenceLedger:
    """The bounded ledger of one session; ``revision`` changes with every accepted entry.

    Attributes:
        excluded: Variable names never recorded (sensitive variables).
    """

    utterances: tuple[EvidenceEntry, ...] = ()
    observations: tuple[EvidenceEntry, ...] = ()
    messages: tuple[EvidenceEntry, ...] = ()
    next_id: int = 1
    revision: int = 0
    excluded: frozenset[str] = frozenset()

    @property
    def ids(self) -> frozenset[str]:
        """Every evidence id currently in the ledger."""
        return frozenset(e.id for e in (*self.utterances, *self.observations, *self.messages))

    def caller_lines(self) -> tuple[str, ...]:
        """The caller's utterances, oldest first."""
        return tuple(e.text for e in self.utterances if e.source == "caller")

    def tail(self, count: int = 4) -> tuple[str, ...]:
        """The last ``count`` utterances as ``source: text``."""
        return tuple(f"{e.source}: {e.text}" for e in self.utterances[-count:])


def _entry(
    ledger: EvidenceLedger, kind: EvidenceKind, source: str, text: str, key: str, at: float
) -> EvidenceEntry:
    return EvidenceEntry(f"e{ledger.next_id}", kind, source, text[:_TEXT_LIMIT], key, at)


def _bump(ledger: EvidenceLedger, **parts: tuple[EvidenceEntry, ...]) -> EvidenceLedger:
    return replace(ledger, next_id=ledger.next_id + 1, revision=ledger.revision + 1, **parts)


def add_utterance(
    ledger: EvidenceLedger, speaker: Speaker, text: str, at: float = 0.0
) -> EvidenceLedger:
    """Record what the caller or the agent said (blank text is ignored)."""
    clean = _SPACE.sub(" ", text).strip()
    if not clean:
        return ledger
    entry = _entry(ledger, "utterance", speaker, clean, "", at)
    return _bump(ledger, utterances=(*ledger.utterances, entry)[-MAX_UTTERANCES:])


def _observe(ledger: EvidenceLedger, entry: EvidenceEntry) -> EvidenceLedger:
    kept = tuple(e for e in ledger.observations if e.key != entry.key)
    return _bump(ledger, observations=(*kept, entry)[-MAX_OBSERVATIONS:])


def add_variable(
    ledger: EvidenceLedger, name: str, value: object, at: float = 0.0
) -> EvidenceLedger:
    """Record a blackboard change as a platform fact (sensitive names are never recorded)."""
    if name in ledger.excluded or _CREDENTIAL.search(name):
        return ledger
    text = f"{name} is now {_json(value)}"
    entry = _entry(ledger, "variable", "platform", text, f"var:{name}", at)
    return _observe(ledger, entry)


def add_tool_result(
    ledger: EvidenceLedger,
    tool: str,
    result: object,
    *,
    args: Mapping[str, object] | None = None,
    transaction: str | None = None,
    at: float = 0.0,
) -> EvidenceLedger:
    """Record a tool outcome; a later read of the same tool and transaction replaces it.

    Args:
        ledger: The ledger.
        tool: The tool name.
        result: Its result (mapping, JSON text or any value).
        args: The call's arguments: scalar business identifiers among them are kept.
        transaction: The transaction id (else read from the result's ``transaction_id``).
        at: When the result arrived.
    """
    data = result_mapping(result)
    txn = transaction or _transaction(data)
    outcome = classify_result(result).value
    fields = compact_result(result, args, ledger.excluded)
    text = f"tool {tool} {outcome}" + (f": {fields}" if fields else "")
    entry = _entry(ledger, "tool", f"tool:{tool}", text, f"tool:{tool}:{txn}", at)
    return _observe(ledger, entry)


def add_application(
    ledger: EvidenceLedger, origin: str, text: str, at: float = 0.0
) -> EvidenceLedger:
    """Record a message from the host application; caller quotes are refused.

    A message whose origin is the caller, or whose text repeats something the caller said,
    is not application evidence and leaves the ledger unchanged.
    """
    clean = _SPACE.sub(" ", text).strip()
    if not clean or origin.lower() in _CALLER_ORIGINS or _quotes_caller(ledger, clean):
        return ledger
    source = f"application:{origin}"
    entry = _entry(ledger, "application", source, clean, "", at)
    return _bump(ledger, messages=(*ledger.messages, entry)[-MAX_MESSAGES:])


def _quotes_caller(ledger: EvidenceLedger, text: str) -> bool:
    said = _norm(text)
    return any(
        len(line) >= 8 and (_norm(line) in said or said in _norm(line))
        for line in ledger.caller_lines()
    )


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()


def _transaction(data: Mapping[str, object] | None) -> str:
    value = data.get("transaction_id") if data else None
    return str(value) if isinstance(value, (str, int)) else ""


def compact_result(
    result: object, args: Mapping[str, object] | None = None, excluded: Iterable[str] = ()
) -> str:
    """Allowlisted outcome fields and requested identifiers, credentials excluded.

    Nested records are never copied whole: only scalar leaves whose key is an outcome field or
    an identifier (``id``, ``*_id``) are kept, at most eight, each value at most 80 characters.
    """
    skip = frozenset(excluded)
    pairs = [(k, v) for k, v in _leaves(result_mapping(result) or {}, "") if _keep(k, skip)]
    requested = [
        (f"requested.{k}", v)
        for k, v in (args or {}).items()
        if _is_scalar(v) and _identifier(k) and _keep(k, skip)
    ]
    return ", ".join(f"{k}={_json(v)[:_FIELD_LIMIT]}" for k, v in (pairs + requested)[:_MAX_FIELDS])


def _leaves(data: Mapping[str, object], prefix: str, depth: int = 0) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, raw in data.items():
        path, value = f"{prefix}{key}", raw
        if isinstance(value, Mapping) and depth < 3:
            out += _leaves(cast(Mapping[str, object], value), f"{path}.", depth + 1)
        elif isinstance(value, list) and depth < 3:
            items = cast(list[object], value)
            if items and isinstance(items[0], Mapping):
                out += _leaves(cast(Mapping[str, object], items[0]), f"{path}[0].", depth + 1)
        elif value is None or isinstance(value, (str, int, float, bool)):
            out.append((path, value))
    return out


def _keep(path: str, excluded: frozenset[str]) -> bool:
    leaf = path.rsplit(".", 1)[-1].split("[")[0]
    if leaf in excluded or any(_CREDENTIAL.search(part) for part in path.split(".")):
        return False
    return leaf in _OUTCOME_KEYS or _identifier(leaf)


def _identifier(key: str) -> bool:
    return key == "id" or key.endswith("_id") or key.endswith("Id")


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
