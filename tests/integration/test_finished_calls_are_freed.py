"""A finished call leaves nothing of itself in the process, however its steward was attached.

A bot process serves call after call. Whatever a finished call leaves behind grows the heap
with every call, and each full run of the cycle collector walks all of it, so every later
call pays for it in CPU time. A registry of attached services keyed weakly by the service,
with the steward (which holds its service) as the value, kept every call's steward, service
and pipeline for good: about 1,300 objects a call. Here each way of attaching a steward is
dropped and must be freed, calls played through real pipelines must leave no steward and no
service, and more calls must not grow the heap.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.pipeline.service_switcher import ServiceSwitcherStrategyManual
from pipecat.services.llm_service import LLMService
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.hook import StewardLLMMixin
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.testing.script import Say
from pipecat_steward.testing.scripted_llm import ScriptedLLM
from pipecat_steward.testing.simulate import run_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = {
    "bella_notte": "happy_path.yaml",
    "clinic": "appointment_to_payment.yaml",
    "lead_capture": "seed_003_four_turns.yaml",
    "order_desk": "cancel_order.yaml",
}
KEPT = (Steward, StewardSession, LLMService)


class MixinLLM(StewardLLMMixin, ScriptedLLM):
    """A service that takes the hook through the mixin instead of a wrapped process_frame."""


def _alive() -> set[int]:
    """The ids of every steward, session and LLM service alive after a full collection."""
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, KEPT)}


def _cascaded() -> None:
    Steward(load_agent(BOTS / "bella_notte")).attach(ScriptedLLM([Say("Hello.")]))


def _mixin() -> None:
    Steward(load_agent(BOTS / "bella_notte")).attach(MixinLLM([Say("Hello.")]))


def _switcher() -> None:
    llms = [ScriptedLLM([Say("Hello.")]), ScriptedLLM([Say("Hi.")])]
    switcher = LLMSwitcher(llms=llms, strategy_type=ServiceSwitcherStrategyManual)
    Steward(load_agent(BOTS / "bella_notte")).attach(switcher)


def _speech_to_speech() -> None:
    realtime = OpenAIRealtimeLLMService(api_key="test", base_url="ws://127.0.0.1:9")
    StewardS2S(load_agent(BOTS / "bella_notte")).attach_s2s(realtime)


ATTACHES: dict[str, Callable[[], None]] = {
    "cascaded": _cascaded,
    "mixin": _mixin,
    "switcher": _switcher,
    "speech-to-speech": _speech_to_speech,
}


@pytest.mark.parametrize("attach", list(ATTACHES))
def test_a_dropped_steward_is_freed_with_its_service(attach: str) -> None:
    before = _alive()
    ATTACHES[attach]()
    assert _alive() - before == set()


@pytest.mark.parametrize("bot", list(SCENARIOS))
async def test_a_call_played_through_the_pipeline_leaves_no_steward(bot: str) -> None:
    scenario = BOTS / bot / "scenarios" / SCENARIOS[bot]
    before = _alive()
    traces = await run_scenario(BOTS / bot, scenario)
    assert traces  # the call was played
    assert _alive() - before == set()


async def test_more_calls_do_not_grow_the_heap() -> None:
    """Five more calls once the process has warmed up leave (almost) nothing behind.

    A handful of objects may appear the first time a path runs (a cache filled once); a call
    that stays in memory leaves a thousand or more.
    """
    agent = load_agent(BOTS / "clinic")
    scenario = BOTS / "clinic" / "scenarios" / SCENARIOS["clinic"]

    async def calls(count: int) -> int:
        for _ in range(count):
            await run_scenario(agent, scenario)
        gc.collect()
        return len(gc.get_objects())

    await calls(2)
    warm = await calls(1)
    after = await calls(5)
    assert after - warm < 100, f"{(after - warm) / 5:.0f} objects a call stay in memory"
