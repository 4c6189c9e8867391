"""``steward test`` asserts: planted wrong expectations fail, per turn, with a non-zero exit."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipecat_steward.cli.main import main
from pipecat_steward.exceptions import StewardError
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario, load_scenarios
from pipecat_steward.testing.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[2]
ORDER_DESK = ROOT / "bots" / "order_desk"
CANCEL = ORDER_DESK / "scenarios" / "cancel_order.yaml"

CANCEL_TURNS = """
    turns:
      - user: "I want to cancel my order"
        llm:
          - calls: [{name: start_retail_order_cancel, args: {quote: "cancel my order"}}]
      - user: "PED-1001"
        llm:
          - calls: [{name: set_order_id, args: {order_id: "PED-1001"}}]
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _planted(tmp_path: Path) -> Path:
    """cancel_order with four wrong expectations on turns 2 and 3."""
    text = CANCEL.read_text().replace("name: cancel_order", "name: planted", 1)
    text = text.replace("fired: [check_cancellable]", "fired: [cancel_order]")
    text = text.replace(
        'bot: ["Shall I cancel order PED-1001?"]', 'bot: ["PED-1001", "Shall I cancel"]'
    )
    text = text.replace("status: COMPLETED", "status: FAILED")
    text = text.replace("llm_calls: []", "llm_calls: [set_order_id:ok]")
    return _write(tmp_path, "planted", text)


@pytest.mark.parametrize("mode", [[], ["--direct"]], ids=["pipeline", "direct"])
def test_planted_wrong_expectations_fail_per_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    code = main(["test", str(ORDER_DESK), str(_planted(tmp_path)), *mode])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL planted/scripted (2 of 3 turns)" in out
    assert "turn 1" not in out
    assert "turn 2 ('PED-1001'):" in out and "turn 3 ('yes'):" in out
    assert "fired: expected ['cancel_order'], got ['check_cancellable']" in out
    assert "bot did not say 'Shall I cancel' after the text expected before it" in out
    assert "transaction.status: expected 'FAILED', got 'COMPLETED'" in out
    assert "llm_calls: expected ['set_order_id:ok'], got []" in out
    assert "0 passed, 1 failed" in out


def test_every_shipped_bot_passes_its_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    for bot in sorted(p.parent for p in (ROOT / "bots").glob("*/agent.yaml")):
        assert main(["test", str(bot), "--direct"]) == 0, capsys.readouterr().out


def test_a_folder_of_scenarios_runs_with_a_header_per_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(CANCEL, tmp_path / "a.yaml")
    _planted(tmp_path)
    assert main(["test", str(ORDER_DESK), str(tmp_path), "--direct"]) == 1
    out = capsys.readouterr().out
    assert "FAIL planted/scripted" in out and "PASS cancel_order/scripted (3 turns)" in out
    assert "2 scenario(s): 1 passed, 1 failed" in out


def test_unknown_expectation_key_is_a_load_error_naming_the_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CANCEL.read_text().replace("bot_source: [preempt]", "bot_sauce: [preempt]")
    path = _write(tmp_path, "typo", text)
    with pytest.raises(
        StewardError, match=r"turn 2\.steward.*'bot_sauce'; did you mean 'bot_source'"
    ):
        load_scenario(path)
    assert main(["test", str(ORDER_DESK), str(path)]) == 2
    assert "bot_sauce" in capsys.readouterr().err


def test_scenario_errors_count_turns_from_one(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "bad",
        "name: bad\nscenarios:\n  - name: s\n    turns:\n      - user: hi\n      - llm: []\n",
    )
    with pytest.raises(StewardError, match=r"turns?\W+turn 2\.user: Field required|turn 2\.user"):
        load_scenario(path)


def test_pipecat_event_expectations_are_checked_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CANCEL.read_text().replace(
        "        steward:\n          fired: [check_cancellable]",
        "        expect:\n"
        "          - {event: function_call, name: set_order_id, args: {order_id: PED-1001}}\n"
        "          - {event: response, text_contains: 'cancel order   PED-1001'}\n"
        "          - {event: response, text_excludes: Shall}\n"
        "          - {event: function_call, name: cancel_order}\n"
        "        steward:\n          fired: [check_cancellable]",
    )
    path = _write(tmp_path, "events", text)
    assert main(["test", str(ORDER_DESK), str(path), "--direct"]) == 1
    out = capsys.readouterr().out
    assert "expect #3 (response): reply contains 'Shall'" in out
    assert "expect #4 (function_call): no call to cancel_order" in out
    assert "expect #1" not in out and "expect #2" not in out


def test_persona_simulations_are_left_to_pipecat_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = CANCEL.read_text() + (
        "  - name: persona\n    persona: a hurried caller\n"
        "    goal: cancel order PED-1001\n    success: the order is cancelled\n"
    )
    path = _write(tmp_path, "both", text)
    assert [s.name for s in load_scenarios(path)] == ["cancel_order/scripted"]
    assert main(["test", str(ORDER_DESK), str(path), "--direct"]) == 0
    out = capsys.readouterr().out
    assert "SKIP cancel_order/persona (a persona simulation: run it with pipecat eval)" in out


@pytest.mark.parametrize("direct", [False, True], ids=["pipeline", "direct"])
async def test_scripted_backend_can_raise_time_out_and_delay(tmp_path: Path, direct: bool) -> None:
    answers = {
        "raises": '{raise: "ConnectionError: upstream down"}',
        "times_out": "{timeout: true}",
        "slow": "{delay_s: 0.2, result: {success: true, eligible: true}}",
    }
    entries = "".join(
        f"  - name: {name}\n    backend:\n      check_cancellable: [{answer}]\n{CANCEL_TURNS}"
        for name, answer in answers.items()
    )
    path = _write(tmp_path, "backend", "name: backend\nscenarios:\n" + entries)
    play = run_scenario_direct if direct else run_scenario
    fired: dict[str, list[dict[str, object]]] = {}
    took: dict[str, float] = {}
    for scenario in load_scenarios(path):
        start = time.perf_counter()
        traces = await play(ORDER_DESK, scenario)
        took[scenario.name] = time.perf_counter() - start
        fired[scenario.name] = traces[1]["fired"]
    assert [f["ok"] for f in fired["backend/raises"]] == [False]
    assert [f["ok"] for f in fired["backend/times_out"]] == [False]
    assert [f["ok"] for f in fired["backend/slow"]] == [True]
    assert took["backend/slow"] >= 0.2  # the answer really waited
    await asyncio.sleep(0)


def test_scripted_backend_failures_become_error_codes() -> None:
    from pipecat_steward.agent.loader import load_agent
    from pipecat_steward.testing.backend import scripted_backend

    agent = scripted_backend(
        load_agent(ORDER_DESK),
        {
            "check_cancellable": [{"raise": "ConnectionError: down"}, {"timeout": True}],
            "cancel_order": [{"raise": "NotAnError"}],
        },
    )
    # The runtime awaits a transaction's check and executor: their stand-ins are coroutines.
    with pytest.raises(ConnectionError, match="down"):
        asyncio.run(agent.tools["check_cancellable"](order_id="x"))
    with pytest.raises(TimeoutError):
        asyncio.run(agent.tools["check_cancellable"](order_id="x"))
    with pytest.raises(RuntimeError, match="NotAnError"):
        asyncio.run(agent.tools["cancel_order"](order_id="x", idempotency_key="k"))


def test_simulate_json_into_a_closed_pipe_exits_cleanly() -> None:
    steward = [sys.executable, "-m", "pipecat_steward.cli.main"]
    argv = [*steward, "simulate", str(ORDER_DESK), str(ORDER_DESK / "scenarios"), "--json"]
    producer = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert producer.stdout is not None
    producer.stdout.readline()
    producer.stdout.close()  # what `| head -1` does once it has its line
    _, err = producer.communicate(timeout=300)
    assert producer.returncode == 0
    assert b"BrokenPipeError" not in err and b"Traceback" not in err


def test_simulate_folder_prints_a_header_per_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(ORDER_DESK), str(ORDER_DESK / "scenarios"), "--direct"]) == 0
    out = capsys.readouterr().out
    assert "== cancel_order/scripted" in out and "== long_session/scripted" in out


async def test_run_scenario_from_user_code_is_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    await run_scenario(ORDER_DESK, load_scenario(CANCEL))
    err = capfd.readouterr().err
    assert "| DEBUG " not in err
