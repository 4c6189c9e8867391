"""docs/events.md is generated from the event models: it lists every kind and every field."""

from __future__ import annotations

from pathlib import Path

from pipecat_steward.events.docs import events_markdown
from pipecat_steward.events.schema import SCHEMA_VERSION, event_kinds

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"


def test_docs_match_the_models() -> None:
    assert DOC.read_text() == events_markdown(), (
        "docs/events.md is stale: run python -m pipecat_steward.events.docs > docs/events.md"
    )


def test_every_kind_and_field_is_documented() -> None:
    text = DOC.read_text()
    assert f"schema version {SCHEMA_VERSION}" in text
    for kind, model in event_kinds().items():
        section = text.split(f"### `{kind}`", 1)[1].split("### ", 1)[0]
        for name in model.model_fields:
            if name not in ("schema_version", "session", "seq", "t", "turn"):
                assert f"| `{name}` |" in section, f"{kind}.{name}"
