"""Unless told, a steward sends client messages only when its pipeline can deliver them.

Only pipecat's RTVI observer turns the steward's RTVI server message frames into messages for
the client, and a ``PipelineWorker`` has one unless RTVI is off. In a pipeline without it each
message would cross every processor and observer for nobody, so a steward that was not told
(``client_messages`` not given) looks at the pipeline its service is set up in; told, it does
as told. Either way the call says and does the same: only the messages differ. The cascaded
hook (on one service or a switcher of several) and the speech-to-speech adapter decide alike.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.pipecat_support.s2s import GENAI_3_WARNING

# isort: split

from pathlib import Path
from typing import Any

import pytest
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.pipeline.service_switcher import ServiceSwitcherStrategyManual
from tests.integration.test_stale_worker import ServerMessages

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing import GeminiLiveServer, TextPipeline
from pipecat_steward.testing.player import play_scenario
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.scripted_llm import ScriptedLLM
from pipecat_steward.testing.servers import gemini_live_service
from pipecat_steward.testing.simulate import PipelinePlayer

BOTS = Path(__file__).resolve().parents[2] / "bots"

# (client_messages given, the pipeline has RTVI, messages are sent)
CASES = [
    (None, True, True),
    (None, False, False),
    (True, True, True),
    (True, False, True),
    (False, True, False),
    (False, False, False),
]


async def _call(told: bool | None, rtvi: bool) -> tuple[Any, list[dict[str, Any]], bool]:
    scenario = load_scenario(BOTS / "clinic" / "scenarios" / "appointment_to_payment.yaml")
    options = {} if told is None else {"client_messages": told}
    player = await PipelinePlayer.start(BOTS / "clinic", scenario, **options)
    pushed = ServerMessages()
    async with player.running([pushed], rtvi=rtvi):
        traces = await play_scenario(player, scenario)
    await player.steward.events.aclose()
    return traces, pushed.data, player.steward.session.sends_client_messages


async def test_the_cascade_sends_client_messages_as_told_or_where_a_client_reads_them() -> None:
    calls = {(told, rtvi): await _call(told, rtvi) for told, rtvi, _ in CASES}
    reference = calls[(True, True)][0]
    for told, rtvi, sends in CASES:
        traces, pushed, sending = calls[(told, rtvi)]
        case = f"client_messages={told}, rtvi={rtvi}"
        assert sending is sends, case
        assert {m["type"] for m in pushed} == (
            {"procedure_status", "steward_events"} if sends else set()
        ), case
        assert traces == reference, f"{case}: the call does the same"


@pytest.mark.parametrize(("told", "rtvi", "sends"), CASES)
@GENAI_3_WARNING
async def test_the_speech_to_speech_adapter_decides_alike(
    told: bool | None, rtvi: bool, sends: bool
) -> None:
    agent = load_agent(BOTS / "bella_notte")
    steward = StewardS2S(agent, **({} if told is None else {"client_messages": told}))
    async with GeminiLiveServer() as fake:
        llm = gemini_live_service(fake, tools=steward.all_tools())
        steward.attach_s2s(llm, respond=True)
        pipeline = TextPipeline(
            llm,
            observers=steward.observers,
            speech_to_speech=True,
            provider_sync=fake.settler(llm),
            rtvi=rtvi,
        )
        async with pipeline:
            assert steward.session.sends_client_messages is sends


@pytest.mark.parametrize("rtvi", [True, False])
async def test_a_switcher_s_pipeline_decides_for_the_steward_attached_to_it(rtvi: bool) -> None:
    steward = Steward(load_agent(BOTS / "clinic"))
    members = [ScriptedLLM([]) for _ in range(2)]
    switcher = LLMSwitcher(members, ServiceSwitcherStrategyManual)  # type: ignore[arg-type]
    steward.attach(switcher)
    async with TextPipeline(switcher, observers=steward.observers, rtvi=rtvi):
        assert steward.session.sends_client_messages is rtvi
