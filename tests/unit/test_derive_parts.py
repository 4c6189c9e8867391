"""The pure and file-editing parts of ``steward derive``: proposals, sidecar merge, agent.yaml."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.cli._agent_yaml import append_steps, replace_sections
from pipecat_steward.core.procedures.derive import (
    DERIVE_SCHEMA,
    derive_request,
    merge_sidecar,
    parse_proposal,
    sidecar_entries,
)
from pipecat_steward.slm.schemas import strict_schema

AGENT = """\
# top comment
name: a
prompt: |
  Hello.
procedure:
  monitor: {enabled: true}  # keep me
  steps:
    - id: one
      title: One
variables: []  # trailing
"""


def test_the_schema_is_strict_mode_ready() -> None:
    strict = strict_schema(DERIVE_SCHEMA)
    row = strict["properties"]["steps"]["items"]
    assert row["required"] == ["id", "title", "complete_when", "irreversible", "applies_when"]
    assert row["properties"]["complete_when"]["type"] == ["object", "null"]


def test_flat_rows_become_sparse_entries() -> None:
    value = {
        "prompt": "p",
        "steps": [
            {
                "id": "a",
                "title": None,
                "irreversible": False,
                "applies_when": None,
                "complete_when": {"kind": "tool", "tool": "pay", "expr": "x", "prompt": None},
            },
            {
                "id": "b",
                "title": "B",
                "irreversible": True,
                "complete_when": None,
                "applies_when": {"kind": "llm", "expr": None, "prompt": "Only for new patients."},
            },
        ],
    }
    proposal = parse_proposal(value)
    assert proposal.settings == (
        {"id": "a", "complete_when": {"kind": "tool", "tool": "pay"}},
        {
            "id": "b",
            "title": "B",
            "applies_when": {"kind": "llm", "prompt": "Only for new patients."},
            "irreversible": True,
        },
    )


def test_sidecar_keeps_only_valid_settings_of_new_steps() -> None:
    proposed = [
        {"id": "old", "title": "Mine now"},
        {"id": "new", "complete_when": {"kind": "variable", "expr": "x == 1"}},
        {"id": "new", "title": "again"},
        {"id": "bare"},
        {"id": "bad", "applies_when": {"kind": "code", "expr": "x =="}},
        {"id": "ghost", "title": "Ghost"},
    ]
    kept, dropped = sidecar_entries(proposed, new_steps={"new", "bare", "bad"}, existing={"old"})
    assert [e["id"] for e in kept] == ["new"]
    assert [d.step for d in dropped] == ["old", "new", "bare", "bad", "ghost"]
    assert "applies_when.expr" in dropped[3].reason


def test_merge_appends_and_keeps_the_authors_entries() -> None:
    authored = {"monitor": {"enabled": True}, "steps": [{"id": "one"}]}
    merged = merge_sidecar(authored, [{"id": "two", "title": "Two"}])
    assert merged == {
        "monitor": {"enabled": True},
        "steps": [{"id": "one"}, {"id": "two", "title": "Two"}],
    }
    assert merge_sidecar(None, []) is None


def test_request_carries_the_prompt_verbatim_and_the_refusal() -> None:
    text = derive_request(
        "  odd  spacing\n\n",
        tools=["pay"],
        variables=[("x", "number", "")],
        existing_steps=["one"],
        existing_groups=["g"],
        refusal="the prose changed at line 2",
    )
    assert "<<<PROMPT\n  odd  spacing\n\nPROMPT>>>" in text
    assert "- x (number)\n" in text and "one, procedure g" in text
    assert "Your previous answer was refused: the prose changed at line 2." in text


def test_append_steps_keeps_comments_and_layout() -> None:
    out = append_steps(AGENT, [{"id": "two", "title": "Two"}])
    assert out is not None
    assert "# keep me" in out and "# trailing" in out and out.startswith("# top comment\n")
    assert yaml.safe_load(out)["procedure"]["steps"] == [
        {"id": "one", "title": "One"},
        {"id": "two", "title": "Two"},
    ]


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x85\u2028\u2029"),
    max_size=60,
)


@settings(deadline=None)
@given(_TEXT)
def test_any_prompt_round_trips_through_agent_yaml(prompt: str) -> None:
    out = replace_sections(AGENT, {"prompt": prompt})
    data = yaml.safe_load(out)
    assert data["prompt"] == prompt
    assert data["procedure"] == yaml.safe_load(AGENT)["procedure"]
    assert "# keep me" in out and out.startswith("# top comment\n")
