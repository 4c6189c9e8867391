"""Checking a turn's trace against a scenario's expectations.

Two vocabularies meet here. The steward's own checks (a turn's ``steward:`` block: slots,
fired tasks, checklist, the bot's words …) compare exactly against the trace. ``pipecat eval``
event expectations (a turn's ``expect:`` list) are checked offline where the trace can answer
them: the bot's reply text (``response`` / ``llm_response`` / ``tts_response`` with
``text_contains`` / ``text_excludes``) and the LLM's function calls (``function_call`` with
``name`` / ``args`` / ``calls``); timing, audio and judged (``eval:``) criteria need a live bot
and are left to ``pipecat eval``.

``pipecat eval`` sends a turn as soon as the turn before it has met its expectations, so those
expectations also pace the call: one of them must wait for the bot's last words, or the next
turn is sent while the bot is still answering (``check_pacing``). ``check_turns`` runs every
check over a played scenario.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypedDict

__all__ = [
    "CHECK_KEYS",
    "CheckedTurn",
    "StewardChecks",
    "check_events",
    "check_expectations",
    "check_pacing",
    "check_turns",
    "unknown_keys",
]

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


class StewardChecks(TypedDict, total=False):
    """The shape of each key of a turn's ``steward:`` block (see ``check_expectations``).

    A scenario file is checked against it as it loads, so a value of the wrong shape is named
    with its turn and key there, rather than found while the turn is compared.
    """

    bot: str | list[str]
    bot_source: list[str]
    status: str
    phase: str | None
    asks: list[str]
    fired: list[str]
    llm_calls: list[str]
    gate: list[str]
    slots: dict[str, str | dict[str, Any]]
    transaction: dict[str, Any]
    checklist: dict[str, str]
    visible: list[str]
    hidden: list[str]
    events: list[str]
    payloads: Any
    hints: Any
    extracted: Any
    corrections: Any
    ended: bool
    slm_calls: Any


class CheckedTurn(Protocol):
    """What the checks read of a scenario turn (``testing.scenario.ScenarioTurn``)."""

    @property
    def checks(self) -> Mapping[str, Any]: ...
    @property
    def events(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def send_after(self) -> Any: ...


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


def check_pacing(trace: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[str]:
    """Whether the turn's expectations hold the next turn until the bot's last words; if not, why.

    ``pipecat eval`` matches a bare reply expectation to the turn's first response, and the
    LLM's tool-call response (empty) is one; an expectation with ``text_contains`` is met when
    the words arrive. So one of them must be met only by the last thing the bot says this turn.
    A judged expectation (``eval:``) counts: the judge can ask for more text.
    """
    said = [b["text"] for b in trace["bot"]]
    if not said or any(_waits_for_last(e, said, trace["llm_calls"]) for e in events):
        return []
    return [
        "pacing: pipecat eval sends the next turn as soon as this turn's expectations are met, "
        f"and none waits for the bot's last words ({said[-1]!r}); expect "
        "{event: response, text_contains: <words only they say>}"
    ]


def _waits_for_last(event: Mapping[str, Any], said: Sequence[str], calls: Sequence[Any]) -> bool:
    if event.get("event") not in _REPLY_EVENTS or event.get("absent"):
        return False
    if event.get("eval") is not None:
        return True
    needle = event.get("text_contains")
    if needle is None:  # met by the first response: the last one only if it is the only one
        return not calls and len(said) == 1
    before = " ".join(said[:-1])
    return _contains(said[-1], str(needle)) and not _contains(before, str(needle))


def check_turns(
    traces: Sequence[Mapping[str, Any]], turns: Sequence[CheckedTurn]
) -> dict[int, list[str]]:
    """Every check of a played scenario: turn number (from 1) → its problems, where it has any.

    Args:
        traces: One trace per played turn, in order.
        turns: The scenario's turns.
    """
    problems: dict[int, list[str]] = {}
    for index, (trace, turn) in enumerate(zip(traces, turns, strict=False)):
        found = check_expectations(trace, turn.checks) + check_events(trace, turn.events)
        after = turns[index + 1] if index + 1 < len(turns) else None
        if after is not None and after.send_after is None:
            found += check_pacing(trace, turn.events)
        if found:
            problems[trace["turn"]] = found
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
