"""The agent.yaml reference and JSON Schema are generated from the loader's models and cannot drift."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.agent.reference import agent_schema, models, undocumented
from pipecat_steward.cli.main import main
from pipecat_steward.cli.schema import render
from pipecat_steward.exceptions import ConfigError

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
BOTS = sorted(p for p in (ROOT / "bots").iterdir() if (p / "agent.yaml").is_file())
REGENERATE = "run `steward schema -o docs/agent.schema.json` and `--markdown -o docs/agent-yaml.md`"


def test_the_committed_schema_is_the_generated_one() -> None:
    committed = (DOCS / "agent.schema.json").read_text(encoding="utf-8")
    assert committed == render(), REGENERATE


def test_the_committed_reference_is_the_generated_one() -> None:
    committed = (DOCS / "agent-yaml.md").read_text(encoding="utf-8")
    assert committed == render(markdown=True), REGENERATE


def test_every_key_the_loader_reads_is_documented() -> None:
    assert undocumented() == []
    reference = render(markdown=True)
    for name, model in models().items():
        assert f'<a id="{name.lower()}"></a>' in reference
        for key in model.model_fields:
            assert f"| `{key}` |" in reference, f"{name}.{key}"


def test_the_reference_speaks_to_bot_builders() -> None:
    text = render(markdown=True) + render()
    for internal in (r"\bseed\b", r"\bissue \d", "§", r"\bDESIGN\b"):
        assert not re.search(internal, text, re.IGNORECASE), internal


@pytest.mark.parametrize("bot", BOTS, ids=lambda p: p.name)
def test_every_shipped_bot_matches_the_schema_its_first_line_names(bot: Path) -> None:
    text = (bot / "agent.yaml").read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema_path = (bot / first.split("$schema=", 1)[1]).resolve()
    assert schema_path == (DOCS / "agent.schema.json").resolve()
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    errors = list(Draft202012Validator(schema).iter_errors(yaml.safe_load(text)))
    assert errors == []


def _bella() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "bots" / "bella_notte" / "agent.yaml").read_text())


SHAPE_MISTAKES: list[tuple[str, Any]] = [
    ("tools", 42),
    ("procedures", {"topic": "a string"}),
    ("flwo", {}),
    ("flow.slots.2.readback_fmt", "clock"),
    ("flow.slots.2.readback_fmt", "lambda v: v"),
    ("flow.slots.1.requires", "welcome"),
    ("flow.tasks.0.on_failure.max_retries", 0),
    ("aux", {"logic_slm": {"provider": "nope"}}),
    ("intents", [{"name": "x", "required": ["a"], "executor": "e"}]),
]


def _put(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    *head, last = path.split(".")
    node: Any = data
    for part in head:
        node = node[int(part)] if part.isdigit() else node[part]
    node[int(last) if last.isdigit() else last] = value
    return data


@pytest.mark.parametrize(("path", "value"), SHAPE_MISTAKES, ids=[m[0] for m in SHAPE_MISTAKES])
def test_the_schema_flags_what_loading_rejects(tmp_path: Path, path: str, value: Any) -> None:
    data = _put(_bella(), path, value)
    assert list(Draft202012Validator(agent_schema()).iter_errors(data))
    shutil.copy(ROOT / "bots" / "bella_notte" / "tools.py", tmp_path / "tools.py")
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=re.escape(path.split(".")[0])):
        load_agent(tmp_path)


def test_steward_schema_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "agent.yaml"
