"""Damage to JSON data, for tests that a reader ends in a report or in its own format error."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st


def json_values(names: Sequence[str]) -> st.SearchStrategy[Any]:
    """Any JSON value: every type, with ``names`` among the strings and the keys."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(names), st.text(max_size=6)
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(names), inner),
        max_leaves=6,
    )


def places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key or index path in a JSON tree."""
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        items = []
    out: list[tuple[Any, ...]] = []
    for key, child in items:
        out += [(*path, key), *places(child, (*path, key))]
    return out


@st.composite
def damaged(draw: st.DrawFn, parts: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """A copy of ``parts`` (name → JSON tree) damaged at one to three places inside the trees.

    At each place a key is removed, or the value is replaced by any JSON value.
    """
    tree = json.loads(json.dumps(parts))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in places(tree) if len(p) > 1]))
        parent = tree
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(json_values(names))
    return tree
