"""``steward validate`` warns when an irreversible executor declares no idempotency handling."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipecat_steward.cli.validate import validate_agent

ORDER_DESK = Path(__file__).resolve().parents[2] / "bots" / "order_desk"


def warned(folder: Path) -> list[str]:
    return [
        i.path
        for i in validate_agent(folder)
        if i.code == "executor_not_idempotent" and i.severity == "warning"
    ]


def test_the_order_desk_declares_every_executor() -> None:
    assert warned(ORDER_DESK) == []


def test_an_unmarked_irreversible_executor_is_warned_about(tmp_path: Path) -> None:
    folder = tmp_path / "desk"
    shutil.copytree(ORDER_DESK, folder, ignore=shutil.ignore_patterns("__pycache__"))
    tools = folder / "tools.py"
    tools.write_text(tools.read_text().replace("@idempotent\n", ""))
    assert warned(folder) == ["intents[0].executor", "intents[2].executor", "intents[3].executor"]
    agent = folder / "agent.yaml"
    agent.write_text(agent.read_text().replace("    read_only: true", "    read_only: false"))
    assert "intents[1].executor" in warned(folder)
