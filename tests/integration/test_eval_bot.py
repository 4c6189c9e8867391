"""Each example bot's ``bot.py`` serves pipecat's runner, and ``pipecat eval`` passes against it.

The LLM is the local chat-completions fake, scripted with the tool calls a capable model makes,
so the run is offline; with a real LLM (``OPENAI_API_KEY``) the same command is the live check.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import asyncio
import os
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from pipecat.evals.scenario import EvalScenarioFile, EvalScriptScenario
from pipecat.evals.session import EvalSession

with warnings.catch_warnings():  # pipecat's websocket client uses a deprecated alias
    warnings.filterwarnings("ignore", "websockets[.](WebSocketClientProtocol|legacy) is deprecated")
    import pipecat.evals.script_session  # noqa: F401

from pipecat_steward.pipecat.runner_bot import build_worker
from pipecat_steward.testing.script import Call, Say
from pipecat_steward.testing.servers import ChatCompletionsServer

ROOT = Path(__file__).resolve().parents[2]
BOTS = sorted(p.parent for p in (ROOT / "bots").glob("*/agent.yaml"))


class _NoTransport:
    def input(self) -> object:
        from pipecat.processors.frame_processor import FrameProcessor

        return FrameProcessor()

    output = input


@pytest.mark.parametrize("bot", BOTS, ids=lambda p: p.name)
def test_every_example_bot_has_a_runner_entry(bot: Path) -> None:
    text = (bot / "bot.py").read_text()
    assert "runner_bot(Path(__file__).parent)" in text
    worker = build_worker(bot, _NoTransport(), {"STEWARD_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert worker is not None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        assert proc.poll() is None, "the bot exited"
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise AssertionError("the bot never listened")


@pytest.mark.parametrize("token_delay", [0.0, 0.05], ids=["fast", "slow"])
async def test_pipecat_eval_passes_a_shipped_scenario_against_bot_py(token_delay: float) -> None:
    """A slow model widens the gap between a tool call and the reply after it.

    ``pipecat eval`` sends the next turn once a turn's expectations are met; the scenario's
    must wait for the reply, not the tool call's empty response, at any model speed.
    """
    script = [
        Call("start_retail_order_cancel", {"quote": "cancel my order"}),
        Say("What's the order number?"),
        Call("set_order_id", {"order_id": "PED-1001"}),
    ]
    scenario = EvalScenarioFile.load(ROOT / "bots/order_desk/scenarios/cancel_order.yaml")[
        "cancel_order/scripted"
    ]
    assert isinstance(scenario, EvalScriptScenario)
    port = _free_port()
    async with ChatCompletionsServer(script, default=Say("Okay."), token_delay=token_delay) as llm:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["STEWARD_LLM_BASE_URL"] = llm.base_url
        argv = [sys.executable, str(ROOT / "bots/order_desk/bot.py"), "--port", str(port)]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            await _wait_for(port, proc)
            session = EvalSession.from_scenario(scenario, f"ws://localhost:{port}/ws")
            result = await session.run()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert result.passed, result
