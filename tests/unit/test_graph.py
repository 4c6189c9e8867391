"""``steward graph`` draws every part of an agent, and each example bot's picture is current."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pipecat_steward.agent.graph import agent_graph, to_dot, to_mermaid
from pipecat_steward.agent.loader import load_agent
from pipecat_steward.cli import graph as graph_cli
from pipecat_steward.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
BOTS = sorted(p.parent for p in (ROOT / "bots").glob("*/agent.yaml"))
MERMAID_BLOCK = re.compile(r"<!-- steward graph: start -->\n```mermaid\n(.*?)```\n", re.S)


def _parts(bot: Path) -> list[str]:
    """Every name the picture must show: slots, tasks and their tools, intents, steps, gates."""
    agent = load_agent(bot)
    names = [s.name for s in agent.flow.slots]
    names += [n for t in agent.flow.tasks for n in (t.name, t.config.tool)]
    names += [str(i["name"]) for i in agent.raw.get("intents") or []]
    if agent.procedures is not None:
        names += list(agent.procedures.steps) + [f"gate: {t}" for t in agent.procedures.gates]
    return names


@pytest.mark.parametrize("bot", BOTS, ids=lambda p: p.name)
def test_the_picture_shows_every_part(bot: Path) -> None:
    graph = agent_graph(load_agent(bot))
    mermaid, dot = to_mermaid(graph), to_dot(graph)
    for name in _parts(bot):
        assert name in mermaid and name in dot, name
    drawn = {n.id for nodes in graph.clusters.values() for n in nodes}
    assert len(drawn) == sum(len(nodes) for nodes in graph.clusters.values())  # no duplicates


def test_requires_conditions_readback_and_gates_are_drawn() -> None:
    bella = to_mermaid(agent_graph(load_agent(ROOT / "bots" / "bella_notte")))
    assert 'slot_available_times -.->|"requires"| slot_selected_time' in bella
    assert "if party_size #gt;= 5" in bella
    assert 'readback_BookReservation -->|"confirmed"| task_BookReservation' in bella
    assert 'task_FindAvailableTimes -->|"fills"| slot_available_times' in bella
    clinic = to_mermaid(agent_graph(load_agent(ROOT / "bots" / "clinic")))
    assert 'step_review_copay -.->|"must be done"| gate_collect_payment' in clinic
    assert 'gate_collect_payment -->|"completes"| step_take_payment' in clinic
    assert "applies when copay_amount #gt; 100" in clinic
    assert "irreversible" in clinic


@pytest.mark.parametrize("bot", BOTS, ids=lambda p: p.name)
def test_each_bot_readme_shows_its_current_picture(bot: Path) -> None:
    readme = (bot / "README.md").read_text()
    assert "![" in readme and "(agent.svg)" in readme
    match = MERMAID_BLOCK.search(readme)
    assert match, "README has no steward graph block"
    current = to_mermaid(agent_graph(load_agent(bot)))
    assert match.group(1) == current, f"stale picture: steward graph {bot.relative_to(ROOT)}"
    svg = (bot / "agent.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for name in _parts(bot):
        assert name.replace("gate: ", "") in svg, f"agent.svg misses {name}: redraw it"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_svg_and_png_via_graphviz(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"clinic.{fmt}"
    assert main(["graph", str(ROOT / "bots" / "clinic"), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data


def test_without_graphviz_the_message_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(graph_cli.shutil, "which", lambda _: None)
    assert main(["graph", str(ROOT / "bots" / "clinic"), "-o", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "--format mermaid" in err
    assert not (tmp_path / "x.svg").exists()


def test_mermaid_needs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(ROOT / "bots" / "order_desk")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart TB\n") and "intent: retail_order_cancel" in out


def test_an_agent_that_does_not_load_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err
