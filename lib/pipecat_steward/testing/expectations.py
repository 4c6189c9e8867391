"""Checking a turn's trace against a scenario's expectations.

Two vocabularies meet here. The steward's own checks (a turn's ``steward:`` block: slots,
fired tasks, checklist, the bot's words …) compare exactly against the trace. ``pipecat eval``
event expectations (a turn's ``expect:`` list) are checked offline where the trace can answer
them: the bot's reply text (``response`` / ``llm_response`` / ``tts_response`` with
``text_contains`` / ``text_excludes``) and the LLM's function calls (``function_call`` with
``name`` / ``args`` / ``calls``); timing, audio and judged (``eval:``) criteria need a live bot
and are left to ``pipecat eval``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["CHECK_KEYS", "check_events", "check_expectations", "unknown_keys"]

_VIEWS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "bot_source": lambda t: [b["source"] for b in t["bot"]],
    "fired": lambda t: [f["tool"] for f in t["fired"]],
    "llm_calls": lambda t: [f"{c['name']}:{c['outcome']}" for c in t["llm_calls"]],
    "gate": lambda t: [f"{g['tool']}:{g['decision']}" for g in t["gate"]],
}
_EXACT = ("status", "phase", "asks", "payloads", "hints", "extracted", "corrections", "ended")
CHECK_KEYS: tuple[str, ...] = tuple(
    sorted(
        {"bot", "slots", "transaction", "checklist", "visible", "hidden", "slm_calls", "events"}
        | set(_VIEWS)
        | set(_EXACT)
    )
)
"""Every key a turn's ``steward:`` block may hold."""

_REPLY_EVENTS = ("response", "llm_response", "tts_response")


def unknown_keys(expect: Mapping[str, Any]) -> list[str]:
    """One message per key that is not a steward check, with the closest known key."""
    problems: list[str] = []
    for key in expect:
        if key in CHECK_KEYS:
            continue
        close = difflib.get_close_matches(key, CHECK_KEYS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(CHECK_KEYS)})"
        problems.append(f"unknown expectation {key!r}{hint}")
    return problems


def check_expectations(trace: Mapping[str, Any], expect: Mapping[str, Any]) -> list[str]:
    """Compare one turn's trace with the steward checks of a turn; return the mismatches.

    Keys: ``bot`` (substrings that must appear in what the bot said, in the order given),
    ``bot_source`` (the sources of the utterances), ``status``, ``phase``, ``asks``, ``fired``
    (tool names), ``llm_calls`` (``name:outcome``), ``gate`` (``tool:decision``), ``slots``
    (name → status, or ``{status, value}``), ``transaction`` and ``checklist`` (the fields and
    steps named), ``visible`` / ``hidden`` (tool names that must / must not be visible at the
    turn's start), ``events`` (debug-entry tags that must appear this turn), and ``payloads``,
    ``hints``, ``extracted``, ``corrections``, ``ended``, ``slm_calls`` compared whole. An
    unknown key is reported as a problem.
    """
    problems = unknown_keys(expect)
    for key, want in expect.items():
        if key in CHECK_KEYS:
            problems += _check(key, trace, want)
    return problems


def _check(key: str, trace: Mapping[str, Any], want: Any) -> list[str]:
    if key == "bot":
        return _bot_in_order(_said(trace), [want] if isinstance(want, str) else list(want))
    if key == "slots":
        return _slot_problems(trace["slots"], want)
    if key == "transaction":
        return _fields("transaction", trace["transaction"] or {}, want)
    if key == "checklist":
        steps = (trace["checklist"] or {}).get("steps", {})
        return _fields("step", steps, want, sep=" ")
    if key in ("visible", "hidden"):
        wrong = [t for t in want if (t in trace["visible_tools"]) != (key == "visible")]
        return [f"{t} should be {key}" for t in wrong]
    if key == "events":
        tags = {e["tag"] for e in trace["events"]}
        return [f"no {t!r} event this turn" for t in want if t not in tags]
    got = _VIEWS[key](trace) if key in _VIEWS else trace.get(key)
    return [] if got == want else [f"{key}: expected {want!r}, got {got!r}"]


def _said(trace: Mapping[str, Any]) -> str:
    return " ".join(b["text"] for b in trace["bot"])


def _bot_in_order(said: str, wanted: Sequence[str]) -> list[str]:
    """Each substring must appear after the previous one ended."""
    at = 0
    for want in wanted:
        found = said.find(want, at)
        if found < 0:
            where = "at all" if want not in said else "after the text expected before it"
            return [f"bot did not say {want!r} {where}: {said!r}"]
        at = found + len(want)
    return []


def _fields(
    label: str, got: Mapping[str, Any], want: Mapping[str, Any], sep: str = "."
) -> list[str]:
    return [
        f"{label}{sep}{k}: expected {v!r}, got {got.get(k)!r}"
        for k, v in want.items()
        if got.get(k) != v
    ]


def _slot_problems(slots: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for name, expected in want.items():
        got = slots.get(name, {"status": "empty", "value": None})
        spec = expected if isinstance(expected, dict) else {"status": expected}
        for field, value in spec.items():
            if got.get(field) != value:
                problems.append(f"slot {name}.{field}: expected {value!r}, got {got.get(field)!r}")
    return problems


def check_events(trace: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[str]:
    """Check the ``pipecat eval`` expectations the offline trace can answer; return mismatches."""
    problems: list[str] = []
    for number, event in enumerate(events, 1):
        kind = event.get("event")
        if event.get("absent") or event.get("eval"):
            continue  # needs a live bot (timing) or a judge LLM
        if kind in _REPLY_EVENTS:
            problems += [f"expect #{number} ({kind}): {p}" for p in _reply(trace, event)]
        elif kind == "function_call":
            problems += [f"expect #{number} (function_call): {p}" for p in _calls(trace, event)]
    return problems


def _reply(trace: Mapping[str, Any], event: Mapping[str, Any]) -> list[str]:
    said = _said(trace)
    contains, excludes = event.get("text_contains"), event.get("text_excludes")
    problems: list[str] = []
    if not said:
        problems.append("the bot said nothing")
    if contains is not None and not _contains(said, str(contains)):
        problems.append(f"reply does not contain {contains!r}: {said!r}")
    if excludes is not None and _contains(said, str(excludes)):
        problems.append(f"reply contains {excludes!r}: {said!r}")
    return problems


def _contains(text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``text`` ignoring spacing, as ``pipecat eval`` matches."""
    return " ".join(needle.split()) in " ".join(text.split())


def _calls(trace: Mapping[str, Any], event: Mapping[str, Any]) -> list[str]:
    wanted = event.get("calls") or [{"name": event.get("name"), "args": event.get("args")}]
    made = [c for c in trace["llm_calls"] if c["outcome"] != "refused"]
    problems: list[str] = []
    for call in wanted:
        name, args = call.get("name"), call.get("args") or {}
        if not any(_call_matches(c, name, args) for c in made):
            label = name or "any function"
            problems.append(f"no call to {label} with {args!r}: {[c['name'] for c in made]}")
    return problems


def _call_matches(call: Mapping[str, Any], name: str | None, args: Mapping[str, Any]) -> bool:
    if name is not None and call["name"] != name:
        return False
    return all(call["args"].get(k) == v for k, v in args.items())
