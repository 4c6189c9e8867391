"""Slot sources are parsed once, when the config loads, into a closed set of typed values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.slots import (
    AnnounceSource,
    EventSource,
    TaskSource,
    UserSource,
    compile_flow,
    load_flow_config,
    parse_source,
)
from pipecat_steward.core.slots.sources import spelling

from .flows import TOY


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("user", UserSource()),
        ("event", EventSource()),
        ("announce", AnnounceSource()),
        ("task:CheckAvailability", TaskSource("CheckAvailability")),
        ("task:", None),
        ("task:9lives", None),
        ("User", None),
        (" user", None),
        ("telepathy", None),
    ],
)
def test_each_spelling_parses_to_one_source_or_none(text: str, parsed: object) -> None:
    assert parse_source(text) == parsed


@given(
    st.one_of(
        st.sampled_from(["user", "event", "announce"]),
        st.from_regex(r"\Atask:[A-Za-z_][A-Za-z0-9_]{0,12}\Z"),
    )
)
def test_spelling_round_trips(text: str) -> None:
    source = parse_source(text)
    assert source is not None and spelling(source) == text


def test_the_loaded_config_holds_typed_sources() -> None:
    flow = load_flow_config(TOY)
    by_name = {s.name: s for s in flow.slots}
    assert by_name["num_guests"].sources == (UserSource(),)
    assert by_name["open_slots"].sources == (TaskSource("CheckAvailability"),)
    assert by_name["open_slots"].source == "task:CheckAvailability"  # the authored text is kept


def test_a_list_keeps_its_order_and_unknown_spellings_are_kept_for_the_check() -> None:
    raw = {"slots": [{"name": "a", "source": ["event", "user", "bogus"], "setter": "set_a"}]}
    slot = load_flow_config(raw).slots[0]
    assert slot.sources == (EventSource(), UserSource())
    assert slot.unknown_sources == ("bogus",)


def test_compiled_slots_read_the_typed_sources() -> None:
    flow = compile_flow(TOY)
    assert flow.slot["open_slots"].task_source == "CheckAvailability"
    assert flow.slot["num_guests"].is_user and not flow.slot["num_guests"].is_event
    assert flow.slot["open_slots"].sources == (TaskSource("CheckAvailability"),)
