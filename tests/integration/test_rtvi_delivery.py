"""With pipecat's RTVI processor and observer in the pipeline, every steward message reaches the
client's transport as an RTVI ``server-message``, in order, and the call is unchanged.

A ``PipelineWorker`` adds RTVI unless told not to, so this is how a deployed bot's client gets
the checklist, the conversation events and the rich response parts.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_stale_worker import ServerMessages

from pipecat_steward.testing.player import play_scenario
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import PipelinePlayer

BOTS = Path(__file__).resolve().parents[2] / "bots"

CALLS = [
    ("clinic", "appointment_to_payment.yaml"),
    ("bella_notte", "steer_back.yaml"),
    ("lead_capture", "seed_003_four_turns.yaml"),
    ("order_desk", "cancel_order.yaml"),
]


async def _call(bot: str, file: str, *, rtvi: bool) -> tuple[Any, list[dict[str, Any]], list[Any]]:
    scenario = load_scenario(BOTS / bot / "scenarios" / file)
    player = await PipelinePlayer.start(BOTS / bot, scenario)
    pushed = ServerMessages()
    async with player.running([pushed], rtvi=rtvi):
        traces = await play_scenario(player, scenario)
        assert player.pipeline is not None
        sent = list(player.pipeline.output.messages)
    return traces, pushed.data, sent


@pytest.mark.parametrize(("bot", "file"), CALLS)
async def test_each_steward_message_reaches_the_transport_once_in_order(
    bot: str, file: str
) -> None:
    traces, pushed, sent = await _call(bot, file, rtvi=True)
    server = [m["data"] for m in sent if m.get("type") == "server-message"]
    assert pushed, "the call has messages for its client"
    assert server == pushed
    assert all(m.get("label") == "rtvi-ai" for m in sent)
    plain_traces, plain_pushed, plain_sent = await _call(bot, file, rtvi=False)
    assert plain_sent == [], "without RTVI nothing reaches the transport"
    assert plain_pushed == [], "nor does the steward push messages nobody can deliver"
    assert plain_traces == traces
