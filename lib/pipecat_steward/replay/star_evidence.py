"""What each user turn gives: the replay's stand-in for per-turn extraction.

The replay has no model to extract values, so it labels each user turn, once, with the API
fields it supplies, from the gold queries that follow. For each query of the task and each
field whose value is new (not given with the same value before), the supplying turn is:

1. the first user turn before the query in which the value is heard
   (:func:`~.star_data.heard`: whole words, ordinals, 12-hour clock times, most words of a
   multi-word value) — also before an earlier query that did not carry it: an extractor reads
   every turn, whatever the wizard put into its calls;
2. with ``fallback`` (the default), else the last user turn before the query: the wizard
   wrote the value into the call, so the caller gave it in some words by then (relative days,
   yes/no paraphrases, nicknames).

Without the fallback the labels are a lower bound of what an extractor finds; with it, an
upper bound. The labels belong to the turn: a perturbation that drops the turn drops them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipecat_steward.replay.star_data import Event, heard

__all__ = ["next_query_values", "supplied_fields"]


def next_query_values(events: Sequence[Event], apis: set[str]) -> list[Mapping[str, str]]:
    """Per event index, the constraints of the next query (of these APIs) at or after it."""
    out: list[Mapping[str, str]] = [{}] * len(events)
    upcoming: Mapping[str, str] = {}
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e.kind == "query" and e.api in apis:
            upcoming = e.constraints or {}
        out[i] = upcoming
    return out


def supplied_fields(
    events: Sequence[Event], apis: set[str], *, fallback: bool = True
) -> list[frozenset[str]]:
    """Per event index, the API fields that user turn supplies (empty for other events)."""
    given: list[set[str]] = [set() for _ in events]
    known: dict[str, str] = {}
    since = 0
    for q, event in enumerate(events):
        if event.kind != "query" or event.api not in apis:
            continue
        turns = [i for i in range(since, q) if events[i].kind == "utter"]
        earlier = [i for i in range(q) if events[i].kind == "utter"]
        for name, raw in (event.constraints or {}).items():
            if known.get(name) == raw:
                continue
            known[name] = raw
            hit = next((i for i in earlier if heard(raw, events[i].text.lower())), None)
            if hit is None and fallback and turns:
                hit = turns[-1]
            if hit is not None:
                given[hit].add(name)
        since = q + 1
    return [frozenset(g) for g in given]
