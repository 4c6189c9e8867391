"""The steward's instruction reaches a cascaded service as pipecat's own update would leave it,
without the rest of that update: a service an error wrote off stays written off, and no
settings log line is written per turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from loguru import logger
from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.pipecat_support.scenario_call import BOTS, play_scenario

# isort: split
from pipecat.frames.frames import LLMContextFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import FunctionCallParams, LLMService
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.settings import LLMSettings

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.instruction import service_instruction, set_service_instruction
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.scripted_llm import ScriptedLLM


def openai(base: str | None) -> LLMService[Any]:
    settings = OpenAILLMService.Settings(model="m", system_instruction=base)
    return OpenAILLMService(api_key="k", base_url="http://127.0.0.1:9/v1", settings=settings)


def scripted(base: str | None) -> LLMService[Any]:
    return ScriptedLLM([], system_instruction=base)


def gemini(base: str | None) -> LLMService[Any]:
    from pipecat.services.google.llm import GoogleLLMService

    settings = GoogleLLMService.Settings(model="gemini-2.5-flash", system_instruction=base)
    return GoogleLLMService(api_key="k", settings=settings)


async def _nothing(params: FunctionCallParams) -> None:
    return None


def appended(llm: LLMService) -> None:
    llm.append_system_instruction("Answer in the caller's language.")


def async_tool(llm: LLMService) -> None:
    # A tool that outlives an interruption makes the service compose its async-tool guidance.
    llm.register_function("lookup", _nothing, cancel_on_interruption=False)


def nothing(llm: LLMService) -> None:
    return None


SERVICES = {"openai": openai, "scripted": scripted, "gemini": gemini}
ADDONS = {"none": nothing, "appended": appended, "async tool": async_tool}
BASES = [None, "You are a booking agent."]
SEQUENCES = [
    ["Base.\n\nAsk for the date."],
    ["Base.\n\nAsk for the date.", "Base.\n\nAsk for the time.", "Base.\n\nAsk for the time."],
    ["", "Base.", ""],
]


def _held(llm: LLMService) -> tuple[Any, ...]:
    return (
        llm.settings.system_instruction,  # pyright: ignore[reportAttributeAccessIssue]
        llm._base_system_instruction,  # pyright: ignore[reportPrivateUsage]
        llm._composed_system_instruction,  # pyright: ignore[reportPrivateUsage]
        service_instruction(llm),
    )


@pytest.mark.parametrize("make", SERVICES.values(), ids=SERVICES.keys())
@pytest.mark.parametrize("addon", ADDONS.values(), ids=ADDONS.keys())
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("sequence", SEQUENCES)
async def test_the_instruction_is_held_as_pipecats_own_update_leaves_it(
    make: Callable[[str | None], LLMService],
    addon: Callable[[LLMService], None],
    base: str | None,
    sequence: list[str],
) -> None:
    ours, theirs = make(base), make(base)
    for llm in (ours, theirs):
        addon(llm)
    for system in sequence:
        await set_service_instruction(ours, system)
        await theirs._update_settings(LLMSettings(system_instruction=system))  # pyright: ignore[reportPrivateUsage]
        assert _held(ours) == _held(theirs)
        assert service_instruction(ours) == system


class Reacting(ScriptedLLM):
    """A service whose class reacts to settings updates itself."""

    def __init__(self) -> None:
        super().__init__([])
        self.deltas: list[LLMSettings] = []

    async def _update_settings(self, delta: LLMSettings) -> dict[str, Any]:  # pyright: ignore[reportIncompatibleMethodOverride]
        self.deltas.append(delta)
        return await super()._update_settings(delta)


async def test_a_service_that_reacts_to_updates_gets_pipecats_full_update() -> None:
    llm = Reacting()
    await set_service_instruction(llm, "Base.\n\nAsk for the date.")
    assert [d.system_instruction for d in llm.deltas] == ["Base.\n\nAsk for the date."]
    assert llm.settings.system_instruction == "Base.\n\nAsk for the date."  # pyright: ignore[reportAttributeAccessIssue]


async def _infer(steward: Steward, llm: LLMService, words: str) -> str:
    """One inference through the steward's hook; returns the instruction it ran with."""
    hook = steward.hook
    assert hook is not None
    ran: list[str] = []

    async def run(frame: Any, direction: Any) -> None:
        ran.append(str(llm.settings.system_instruction))  # pyright: ignore[reportAttributeAccessIssue]

    frame = LLMContextFrame(context=LLMContext(messages=[{"role": "user", "content": words}]))  # type: ignore[list-item]
    await hook.on_context(frame, FrameDirection.DOWNSTREAM, run)
    return ran[0]


@pytest.mark.parametrize("make", SERVICES.values(), ids=SERVICES.keys())
async def test_a_service_an_error_wrote_off_stays_written_off(
    make: Callable[[str | None], LLMService],
) -> None:
    """pipecat marks a service unusable after a permanent error (a rejected key or model) and
    services stop taking work; a new instruction is no fix, so the steward's must not undo it."""
    steward = Steward(load_agent(BOTS / "bella_notte"))
    llm = make(None)
    steward.attach(llm)
    await llm.set_usable(False)
    system = await _infer(steward, llm, "A table for 4 on July 17th, please")
    assert system.startswith(steward.agent.prompt.strip()) and system != steward.agent.prompt
    assert not llm.is_usable


async def test_no_settings_line_is_logged_per_turn() -> None:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="INFO")
    try:
        played = await play_scenario("bella_notte", "happy_path.yaml", 0.0)
    finally:
        logger.remove(sink)
    assert len(played.llm.inferences) > 3  # the instruction changed on the way
    assert not [line for line in lines if "updated settings fields" in line]
