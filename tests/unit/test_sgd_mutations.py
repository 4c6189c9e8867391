"""Any damage to a split ends in a report or in ``SgdFormatError``, never in another exception.

Hypothesis damages a copy of the fixture split (seven dev dialogues and their schema) at one
or a few places: a key removed, or a value replaced by another JSON value (including names the
schema does not define). The replay must then either finish with a well-formed report or stop
with ``SgdFormatError``; any other exception is a reader that trusts its input.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipecat_steward.replay import SgdFormatError, replay_split

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sgd"
SCHEMA: list[Any] = json.loads((FIXTURE / "schema.json").read_text(encoding="utf-8"))
DIALOGUES: list[Any] = json.loads((FIXTURE / "dialogues_001.json").read_text(encoding="utf-8"))

# Values a damaged field may take: every JSON type, and names the split does or does not know.
NAMES = ["FindRestaurants", "Restaurants_2", "city", "NoSuchIntent", "No_Such_1", "NONE", "USER"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(NAMES), st.text(max_size=6)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES), inner),
    max_leaves=6,
)


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key or index path in a JSON tree."""
    out: list[tuple[Any, ...]] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        out.append((*path, key))
        out.extend(_places(child, (*path, key)))
    return out


@st.composite
def damaged(draw: st.DrawFn) -> tuple[list[Any], list[Any]]:
    """The split with one to three places damaged (in the schema or the dialogues)."""
    split = json.loads(json.dumps({"schema": SCHEMA, "dialogues": DIALOGUES}))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in _places(split) if len(p) > 1]))
        parent = split
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(VALUES)
    return split["schema"], split["dialogues"]


@given(damaged())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_split_reports_or_names_its_damage(split: tuple[list[Any], list[Any]]) -> None:
    schema, dialogues = split
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "schema.json").write_text(json.dumps(schema), encoding="utf-8")
        (root / "dialogues_001.json").write_text(json.dumps(dialogues), encoding="utf-8")
        try:
            report = replay_split(root)
        except SgdFormatError as exc:
            assert str(exc).startswith(str(root)) or "which schema.json does not define" in str(exc)
            return
    for key, value in report.items():
        if isinstance(value, float) and key.endswith(("accuracy", "agreement")):
            assert 0.0 <= value <= 1.0, (key, value)
