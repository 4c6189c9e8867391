"""``redact_tree`` redacts every string of any JSON-like tree, whatever container types carry it.

Its fast path dispatches on exact builtin types; subclasses (a ``StrEnum`` member, an
``OrderedDict``, a read-only mapping) take the general path. Both must give what a plain
recursive walk gives.
"""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.redaction import redact_tree


class Colour(enum.StrEnum):
    RED = "red secret"


def walk(value: Any, redact: Any) -> Any:
    """The reference: every str (subclasses too) redacted, mappings and sequences rebuilt."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {walk(k, redact): walk(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [walk(v, redact) for v in value]
    return value


def shout(text: str) -> str:
    return text.replace("secret", "[redacted]")


leaves = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["a secret", "no", Colour.RED]),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
)
keys = st.one_of(st.text(max_size=8), st.sampled_from(["secret key", Colour.RED]), st.integers())
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
        st.dictionaries(keys, inner, max_size=4).map(OrderedDict),
        st.dictionaries(keys, inner, max_size=4).map(MappingProxyType),
    ),
    max_leaves=20,
)


@given(trees)
def test_redact_tree_matches_a_plain_recursive_walk(tree: Any) -> None:
    assert redact_tree(tree, shout) == walk(tree, shout)


def test_a_str_subclass_is_redacted_and_comes_back_a_str() -> None:
    out = redact_tree({"colour": Colour.RED, "items": (Colour.RED,)}, shout)
    assert out == {"colour": "red [redacted]", "items": ["red [redacted]"]}
    assert type(out["colour"]) is str


class Card:
    """A value object whose text carries the secret (what ``str``/JSON would show of it)."""

    def __str__(self) -> str:
        return "card a secret"


CARRIERS: list[Any] = [
    {"a secret"},
    frozenset({"a secret"}),
    b"a secret",
    bytearray(b"a secret"),
    Card(),
    {"nested": [{"set": {"a secret", "another secret"}}]},
    {("a secret", 1): "key is a tuple"},
    {Card(): "key is an object"},
]


@pytest.mark.parametrize("value", CARRIERS, ids=lambda v: type(v).__name__)
def test_a_secret_in_any_carrier_is_redacted_and_the_result_is_plain_json(value: Any) -> None:
    out = redact_tree(value, shout)
    text = json.dumps(out)  # no ``default``: only JSON's own types may come back
    assert "secret" not in text.replace("[redacted]", "")


carriers = st.one_of(
    leaves,
    st.sampled_from([b"a secret", Card()]),
    st.frozensets(st.sampled_from(["a secret", "b", "c secret"]), max_size=3),
)
any_trees = st.recursive(
    carriers,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(keys, inner, max_size=4),
        st.dictionaries(keys, inner, max_size=4).map(MappingProxyType),
        st.frozensets(st.sampled_from(["x secret", "y"]), max_size=2).map(set),
    ),
    max_leaves=20,
)


@given(any_trees)
def test_whatever_carries_it_no_string_leaves_unredacted(tree: Any) -> None:
    assert "secret" not in json.dumps(redact_tree(tree, shout)).replace("[redacted]", "")
