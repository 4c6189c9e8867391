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
from tests.damage_support import damaged

from pipecat_steward.replay import SgdFormatError, replay_split

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sgd"
SCHEMA: list[Any] = json.loads((FIXTURE / "schema.json").read_text(encoding="utf-8"))
DIALOGUES: list[Any] = json.loads((FIXTURE / "dialogues_001.json").read_text(encoding="utf-8"))

NAMES = ["FindRestaurants", "Restaurants_2", "city", "NoSuchIntent", "No_Such_1", "NONE", "USER"]
"""Names the damage puts in: some the split knows, some it does not."""


@given(damaged({"schema": SCHEMA, "dialogues": DIALOGUES}, NAMES))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_split_reports_or_names_its_damage(split: dict[str, Any]) -> None:
    schema, dialogues = split["schema"], split["dialogues"]
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
