"""The instruction of an anticipated step is applied while the caller's turn ends.

Applying an instruction is a settings update of the LLM service (pipecat logs each one). When
the steward anticipates the step for the caller's words, its hook applies that step's
instruction in the turn-end wait, so the inference that uses the step finds it applied and the
update is off the way from the caller's words to the request. Whatever the interleaving, every
inference runs with its own instruction: a prepared one never overtakes an inference.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.pipecat_support.scenario_call import BOTS, play_scenario

# isort: split
from pipecat.frames.frames import Frame, LLMContextFrame
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.slots import Action
from pipecat_steward.pipecat.hook import StewardHook
from pipecat_steward.pipecat.instruction import service_instruction
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.scripted_llm import ScriptedLLM

SCENARIOS = [
    ("bella_notte", "happy_path.yaml", True),
    ("bella_notte", "correction_after_confirmation.yaml", True),
    ("lead_capture", "seed_003_four_turns.yaml", True),
    ("lead_capture", "invalid_email.yaml", True),
    # A transaction turn reads the clock and the turn count as it is taken: nothing is
    # anticipated, so nothing is prepared and the instruction is applied as before.
    ("order_desk", "cancel_order.yaml", False),
]


class Updates:
    """Every settings update of a service, and whether it came while a caller turn's first
    inference was being handled (between its context frame reaching the service and the end of
    the inference): on the way from the caller's words to the request."""

    def __init__(self, llm: ScriptedLLM) -> None:
        self.llm = llm
        self.seen: list[tuple[str, bool]] = []
        self._handling = False
        # Every change of the instruction ends in the service composing it anew (it also does
        # when its tools change): a composition from a new base instruction is an update.
        compose = llm._compose_system_instruction  # pyright: ignore[reportPrivateUsage]
        last = [service_instruction(llm)]

        def recorded() -> None:
            compose()
            base = service_instruction(llm)
            if base != last[0]:
                last[0] = base
                self.seen.append((str(base), self._handling))

        llm._compose_system_instruction = recorded  # type: ignore[method-assign]

    def watch(self) -> None:
        """Wrap the service's frame handling (after the steward attached, so outside its hook)."""
        process = self.llm.process_frame

        async def process_frame(frame: Frame, direction: FrameDirection) -> None:
            first = isinstance(frame, LLMContextFrame) and direction == FrameDirection.DOWNSTREAM
            self._handling = first
            try:
                await process(frame, direction)
            finally:
                self._handling = False if first else self._handling

        self.llm.process_frame = process_frame  # type: ignore[method-assign]

    @property
    def systems(self) -> list[str]:
        """Every instruction applied, in order."""
        return [system for system, _ in self.seen]

    @property
    def on_the_way(self) -> list[str]:
        return [system for system, handling in self.seen if handling]


async def call(bot: str, name: str, turn_end_s: float) -> tuple[list[Any], Updates, Any]:
    updates: list[Updates] = []
    played = await play_scenario(
        bot,
        name,
        turn_end_s,
        before_attach=lambda llm: updates.append(Updates(llm)),
        after_attach=lambda llm: updates[0].watch(),
    )
    seen = [(i.seen.direction, i.seen.system) for i in played.llm.inferences]
    return seen, updates[0], (played.spoken, played.state)


@pytest.mark.parametrize(("bot", "name", "anticipates"), SCENARIOS)
async def test_a_turn_whose_step_was_anticipated_finds_its_instruction_applied(
    bot: str, name: str, anticipates: bool
) -> None:
    # A wait far longer than the moment the steward lets pass, so a busy machine still prepares.
    waited, prepared, outcome = await call(bot, name, turn_end_s=0.25)
    at_once, unprepared, outcome_at_once = await call(bot, name, turn_end_s=0.0)
    # Every inference ran with the very instruction it runs with when nothing is anticipated.
    assert waited == at_once and outcome == outcome_at_once
    # Without the wait the caller turns' instructions are applied on the way to the request;
    # with it, none is.
    assert unprepared.on_the_way
    assert prepared.on_the_way == ([] if anticipates else unprepared.on_the_way)


def hooked(bot: str = "bella_notte") -> tuple[Steward, StewardHook, ScriptedLLM, Updates]:
    steward = Steward(load_agent(BOTS / bot))
    llm = ScriptedLLM([])
    hook = steward.attach(llm)
    return steward, hook, llm, Updates(llm)


def caller_says(words: str) -> LLMContextFrame:
    return LLMContextFrame(context=LLMContext(messages=[{"role": "user", "content": words}]))  # type: ignore[list-item]


def instruction(llm: ScriptedLLM) -> str:
    return str(llm.settings.system_instruction)


WORDS = "A table for 4 on July 17th, please"
PREPARED = Action(
    "collection", None, "in_progress", suffix="An instruction prepared for other words."
)


async def test_the_anticipated_instruction_is_applied_before_the_inference_and_not_again() -> None:
    steward, hook, llm, updates = hooked()
    action = steward.driver.anticipate(WORDS)
    assert action is not None
    hook.prepare(action)
    await asyncio.sleep(0)  # the turn-end wait
    assert len(updates.systems) == 1
    ran: list[str] = []

    async def run(frame: Any, direction: Any) -> None:
        ran.append(instruction(llm))

    await hook.on_context(caller_says(WORDS), FrameDirection.DOWNSTREAM, run)
    # Used as prepared: nothing applied on the way.
    assert ran == updates.systems and len(updates.systems) == 1
    assert steward.session.anticipation.stats.hits == 1


async def test_an_inference_that_begins_before_the_prepared_instruction_keeps_its_own() -> None:
    _, hook, llm, updates = hooked()
    ran: list[str] = []

    async def run(frame: Any, direction: Any) -> None:
        ran.append(instruction(llm))

    hook.prepare(PREPARED)  # scheduled, not yet applied
    await hook.on_context(caller_says(WORDS), FrameDirection.DOWNSTREAM, run)
    await asyncio.sleep(0.01)  # the prepared update gets its turn, after the inference began
    assert PREPARED.suffix not in ran[0]
    assert instruction(llm) == ran[0] and updates.systems == [ran[0]]


async def test_nothing_is_prepared_while_an_inference_runs() -> None:
    _, hook, llm, updates = hooked()
    inside: list[str] = []

    async def run(frame: Any, direction: Any) -> None:
        hook.prepare(PREPARED)  # the caller speaks again while the model answers
        await asyncio.sleep(0.01)
        inside.append(instruction(llm))

    await hook.on_context(caller_says(WORDS), FrameDirection.DOWNSTREAM, run)
    await asyncio.sleep(0.01)
    assert PREPARED.suffix not in inside[0] and instruction(llm) == inside[0]
    assert len(updates.systems) == 1


@pytest.mark.parametrize("preparing_first", [True, False])
async def test_an_update_in_progress_and_an_inference_never_interleave(
    preparing_first: bool,
) -> None:
    """A host that sends the instruction on (the fallback's frames) may suspend while applying:
    the inference waits for a prepared update in progress, then applies its own."""
    steward = Steward(load_agent(BOTS / "bella_notte"))
    llm = ScriptedLLM([])
    gate = asyncio.Event()
    held: list[str] = []

    async def apply_system(system: str) -> None:
        if PREPARED.suffix in system:
            await gate.wait()  # the prepared update is slow to go out
        held.append(system)

    hook = StewardHook(steward.session, steward.tools, llm, "Base.", apply_system=apply_system)
    ran: list[str] = []

    async def run(frame: Any, direction: Any) -> None:
        ran.append(held[-1])

    def infer() -> asyncio.Task[None]:
        return asyncio.create_task(
            hook.on_context(caller_says(WORDS), FrameDirection.DOWNSTREAM, run)
        )

    if preparing_first:
        hook.prepare(PREPARED)
        await asyncio.sleep(0)  # the prepared update starts and suspends
        inference = infer()
    else:
        inference = infer()  # begins before the prepared update gets its turn
        hook.prepare(PREPARED)
    await asyncio.sleep(0.01)
    gate.set()
    await inference
    await asyncio.sleep(0.01)
    assert len(ran) == 1 and PREPARED.suffix not in ran[0]
    assert held[-1] == ran[0]  # the instruction left last is the inference's own
    expected = ["prepared", "own"] if preparing_first else ["own"]
    assert ["prepared" if PREPARED.suffix in s else "own" for s in held] == expected


async def test_an_action_that_acts_before_any_inference_prepares_nothing() -> None:
    _, hook, _, updates = hooked()
    hook.prepare(
        Action("terminal", None, "completed", suffix="Unused.", preempt=True, message="Bye.")
    )
    await asyncio.sleep(0.01)
    assert updates.systems == []


SUFFIXES = ["", "Ask for the time.", "Ask for the time.", "Read the booking back."]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=20))
def test_the_instruction_of_an_action_is_always_its_own(steps: list[tuple[int, bool]]) -> None:
    """The hook keeps the last instruction it made: equal suffixes that are distinct strings,
    the same suffix again and a new base prompt each still give that action's instruction."""
    _, hook, _, _ = hooked()
    pool = [str(s) for s in SUFFIXES]  # the equal two are distinct objects
    pool[2] = "".join(["Ask for the ", "time."])
    for n, (index, new_base) in enumerate(steps):
        if new_base:
            hook.base_prompt = f"Base prompt {n}."
        action = Action("collection", None, "in_progress", suffix=pool[index])
        made = hook._system(action)  # pyright: ignore[reportPrivateUsage]
        expected = (
            f"{hook.base_prompt}\n\n{pool[index]}".strip() if pool[index] else hook.base_prompt
        )
        assert made == expected
