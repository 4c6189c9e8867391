"""``redact_tree`` redacts every string of any JSON-like tree, whatever container types carry it.

Its fast path dispatches on exact builtin types; subclasses (a ``StrEnum`` member, an
``OrderedDict``, a read-only mapping) take the general path. Both must give what a plain
recursive walk gives.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

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
