"""Any damage to a trace file ends in a replay or in a message naming the file and the line.

``steward studio AGENT --replay FILE`` replays a ``steward simulate --json`` trace file. A
line that was no JSON, or a field of the wrong type (a list where the trace holds an object, a
number for a tool name, a step state the checklist does not know), stopped the replay inside
the page with a ``KeyError``, ``TypeError`` or ``AttributeError``. Hypothesis damages the
traces of real calls (clinic's, with its checklist and monitor corrections, and Bella
Notte's) at one to three places; the replay must read them all or raise ``TraceFileError``,
and the command refuses such a file with exit 2 before serving anything.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from tests.damage_support import damaged

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.cli.main import main
from pipecat_steward.events.hub import EventHub
from pipecat_steward.events.store import open_event_store
from pipecat_steward.studio.sessions import SessionSource
from pipecat_steward.studio.trace_format import TraceFileError
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import run_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
CLINIC = BOTS / "clinic"


def _traces(bot: str, scenario: str) -> list[dict[str, Any]]:
    agent = load_agent(BOTS / bot)
    return asyncio.run(run_scenario(agent, load_scenario(BOTS / bot / "scenarios" / scenario)))


TRACES = {
    "clinic": _traces("clinic", "appointment_to_payment.yaml"),
    "bella": _traces("bella_notte", "happy_path.yaml"),
}
NAMES = sorted({key for traces in TRACES.values() for t in traces for key in t})
NAMES += ["name", "tool", "text", "source", "status", "value", "steps", "current", "done"]


def _write(folder: Path, traces: list[Any]) -> Path:
    path = folder / "call.jsonl"
    path.write_text("== a folder run's header\n" + "\n".join(json.dumps(t) for t in traces))
    return path


def _replay(path: Path) -> int:
    """Replay ``path`` into an in-memory store; the number of events it made."""

    async def replay() -> int:
        hub = EventHub(open_event_store("memory:"))
        session = await SessionSource(hub, "clinic", {}).resolve(str(path))
        return len(await hub.store.read(session))

    return asyncio.run(replay())


def test_the_undamaged_traces_replay(tmp_path: Path) -> None:
    for name, traces in TRACES.items():
        folder = tmp_path / name
        folder.mkdir()
        assert _replay(_write(folder, traces)) > len(traces), name


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda t: t.__setitem__(0, "{not json"), "line 2: not JSON"),
        (lambda t: t[0].__setitem__("bot", [{"source": "llm"}]), "line 2: bot: 0.text: Field required"),
        (lambda t: t[1].__setitem__("llm_calls", {"name": "x"}), "line 3: llm_calls"),
        (lambda t: t[0]["checklist"]["steps"].__setitem__("authenticate", "maybe"), "steps"),
        (lambda t: t[2].__setitem__("slots", ["welcome"]), "line 4: slots"),
        (lambda t: t[0].__setitem__("turn", -1), "line 2: turn"),  # events count turns from 0
    ],
)
def test_a_damaged_line_is_named_and_the_command_refuses_the_file(
    damage: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = json.loads(json.dumps(TRACES["clinic"]))
    damage(traces)
    lines = [t if isinstance(t, str) else json.dumps(t) for t in traces]
    path = tmp_path / "call.jsonl"
    path.write_text("== a folder run's header\n" + "\n".join(lines))
    with pytest.raises(TraceFileError, match=says):
        _replay(path)
    assert main(["studio", str(CLINIC), "--replay", str(path)]) == 2
    assert f"{path}: line" in capsys.readouterr().err


@given(damaged(TRACES, NAMES))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_damaged_traces_replay_or_name_the_damage(traces: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, calls in traces.items():
            folder = Path(tmp) / name
            folder.mkdir()
            path = _write(folder, calls if isinstance(calls, list) else [calls])
            try:
                _replay(path)
            except TraceFileError as exc:
                assert str(exc).startswith(str(path)), exc
