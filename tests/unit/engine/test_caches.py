"""The engine's per-flow caches never return a stale result: a warmed flow answers exactly like
a freshly compiled one, for different states and different visible-tool sets."""

from __future__ import annotations

from pipecat_steward.core.slots import compile_flow, fill_slots, route_setter, step
from pipecat_steward.core.slots.prompt import (
    _PROTOCOL_CACHE_LIMIT,
    protocol_block,
    visible_derived,
)
from pipecat_steward.core.state import SessionState

from .flows import LEAD


def _states() -> list[SessionState]:
    flow = compile_flow(LEAD)
    empty = SessionState()
    some = fill_slots(flow, empty, {"name": "Ada", "company_size": 12}).state
    most = fill_slots(flow, some, {"current_tool": "sheets", "timeline": "Q3"}).state
    return [empty, some, most, empty]


def test_protocol_block_follows_the_visible_set() -> None:
    flow = compile_flow(LEAD)
    first = protocol_block(flow, frozenset({"set_name", "set_email"}))
    second = protocol_block(flow, frozenset({"set_email"}))
    assert "→ set_name" in first and "→ set_name" not in second
    assert protocol_block(flow, frozenset({"set_name", "set_email"})) == first
    assert protocol_block(flow, ["set_email"]) == second  # any iterable, same key
    assert protocol_block(flow, frozenset()) != first
    for shown in (frozenset({"set_name", "set_email"}), frozenset({"set_email"}), frozenset()):
        _, hidden, ordered = visible_derived(flow, shown)
        assert hidden == flow.tool_names - shown and ordered == tuple(sorted(shown))


def test_a_warmed_flow_answers_like_a_fresh_one_for_every_state() -> None:
    warm = compile_flow(LEAD)
    for state in _states():
        step(warm, state, "hello")
    for state in _states():
        fresh = compile_flow(LEAD)
        for text in ("hello", ""):
            assert step(warm, state, text) == step(fresh, state, text)
    suffixes = {step(warm, s, "hi").action.suffix for s in _states()}
    assert len(suffixes) == 3  # the three distinct states get three distinct suffixes


def test_visible_set_changes_within_one_flow_change_the_suffix() -> None:
    flow = compile_flow(LEAD)
    before = step(flow, SessionState(), "Hi")
    routed = route_setter(flow, before.state, "set_name", {"stored": True, "value": "Ada"})
    after = step(flow, routed.state)
    assert "set_name" in before.action.visible_tools
    assert "set_name" not in after.action.visible_tools
    assert "→ set_name" in before.action.suffix and "→ set_name" not in after.action.suffix
    assert after == step(compile_flow(LEAD), routed.state)
    assert step(flow, SessionState(), "Hi") == before


def test_the_cache_is_bounded_and_stays_correct_past_the_bound() -> None:
    flow = compile_flow(LEAD)
    setters = sorted(flow.setters)
    keys = [
        frozenset(s for bit, s in enumerate(setters) if mask >> bit & 1)
        for mask in range(2 ** len(setters))
    ]
    for _ in range(_PROTOCOL_CACHE_LIMIT // len(keys) + 2):
        for key in keys:
            assert protocol_block(flow, key) == protocol_block(compile_flow(LEAD), key)
    assert len(flow.protocol_blocks) <= _PROTOCOL_CACHE_LIMIT
