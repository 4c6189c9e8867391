"""A steward attached to a pipecat ``LLMSwitcher`` steers whichever of its services infers.

An app with a primary LLM and its failover puts both in an ``LLMSwitcher``; the steward is
attached to the switcher as to one service. Every example bot's scripted scenarios play through
a real pipeline whose switcher changes its active service before every caller turn (or at
random turns): each call must be the call of one service, trace for trace, and the service that
infers must be the one the steward's hook says.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pipecat.frames.frames import (
    InterruptionFrame,
    LLMContextFrame,
    LLMMessagesAppendFrame,
    ManuallySwitchServiceFrame,
)
from pipecat.observers.base_observer import BaseObserver, FrameProcessed, FramePushed
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.pipeline.service_switcher import ServiceSwitcherStrategyManual

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import done_name
from pipecat_steward.pipecat.monitor import attach_monitor
from pipecat_steward.pipecat.preempt import inject_note
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.player import play_scenario, scenario_setup
from pipecat_steward.testing.scenario import Scenario, ScenarioTurn, load_scenarios
from pipecat_steward.testing.script import Say
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.scripted_slm import (
    Answer,
    ScriptedSLM,
    SLMRequest,
    null_object,
    verdict,
)
from pipecat_steward.testing.simulate import PipelinePlayer, ScriptedModel, run_scenario

BOTS = Path(__file__).resolve().parents[2] / "bots"
SCENARIOS = sorted(p for p in BOTS.glob("*/scenarios/*.yaml"))
SPARE = 12
_AT_COPAY = (
    "authenticate",
    "confirm_identity",
    "lookup_patient",
    "confirm_appointment",
    "headshot",
)
Chooser = Callable[[int], int]


class SwitchingPlayer(PipelinePlayer):
    """``PipelinePlayer`` over an ``LLMSwitcher`` of two scripted services sharing one script;
    ``choose(turn)`` names the service made active before each caller turn."""

    def __init__(self, steward: Steward, clock: Any, choose: Chooser) -> None:
        # Not the single scripted service ``PipelinePlayer`` attaches: the switcher's two.
        self.steward, self.clock, self.pipeline = steward, clock, None
        self.model = ScriptedModel()
        self.members = [ScriptedLLM([], admit_hidden=True) for _ in range(2)]
        self.llm = LLMSwitcher(self.members, ServiceSwitcherStrategyManual)  # type: ignore[assignment]
        steward.attach(self.llm)
        self.choose, self.turns, self.inferred_by = choose, 0, list[int]()

    async def play(self, turn: ScenarioTurn) -> None:
        assert self.pipeline is not None, "play inside running()"
        self.turns += 1
        active = self.members[self.choose(self.turns)]
        await self.pipeline.worker.queue_frame(ManuallySwitchServiceFrame(service=active))
        self.model.queue = self.steps(turn)
        for member in self.members:
            member.extend(FunctionStep(self.model) for _ in range(SPARE - member.remaining))
        before = [member.remaining for member in self.members]
        await self.pipeline.say(turn.user)
        await self.settle()
        used = [b - m.remaining for b, m in zip(before, self.members, strict=True)]
        self.inferred_by.append(sum(1 << i for i, n in enumerate(used) if n))
        hook = self.steward.hook
        assert hook is not None and hook.llm is active  # the hook of the service that infers


async def _switching(path: Path, scenario: Scenario, choose: Chooser) -> tuple[list[Any], Any]:
    loaded, clock, settings = scenario_setup(path.parents[1], scenario)
    steward = Steward(loaded, clock=clock, **settings)
    await steward.start()
    player = SwitchingPlayer(steward, clock, choose)
    async with player.running():
        traces = await play_scenario(player, scenario)
    await steward.events.aclose()
    return traces, player


@pytest.mark.parametrize("path", SCENARIOS, ids=[f"{p.parts[-3]}/{p.stem}" for p in SCENARIOS])
async def test_a_call_through_a_switcher_is_the_call_of_one_service(path: Path) -> None:
    for index, scenario in enumerate(load_scenarios(path)):
        want = await run_scenario(path.parents[1], scenario.model_copy(deep=True))
        plan = random.Random(f"{path.stem}-{index}")
        picks = [plan.randrange(2) for _ in range(len(scenario.turns) + 1)]
        for choose in (lambda n: n % 2, picks.__getitem__):
            got, player = await _switching(path, scenario.model_copy(deep=True), choose)
            assert got == want
            wanted = [1 << player.choose(n) for n in range(1, player.turns + 1)]
            assert [b for b in player.inferred_by if b] == [
                w for w, b in zip(wanted, player.inferred_by, strict=True) if b
            ]  # each turn's inferences ran on the service made active for it, and only there


async def test_a_note_through_the_first_service_reaches_the_one_that_infers() -> None:
    """The monitor sends its notes through the switcher's first service (``attach`` gives it
    that one): with the second one active, the note still joins the context and the active
    service answers it."""
    first, second = ScriptedLLM([Say("first.")] * 3), ScriptedLLM([Say("second.")] * 3)
    switcher = LLMSwitcher([first, second], ServiceSwitcherStrategyManual)
    async with TextPipeline(switcher) as pipeline:
        await pipeline.worker.queue_frame(ManuallySwitchServiceFrame(service=second))
        await pipeline.say("hello")
        await pipeline.settle()
        await inject_note(first, "Ask for the date.", run_llm=True)
        await pipeline.settle()
        notes = [m for m in pipeline.context.get_messages() if "Ask for the date." in str(m)]
    assert pipeline.spoken == ["second.", "second."] and len(notes) == 1
    assert (first.remaining, second.remaining) == (3, 1)


class Handled(BaseObserver):
    """What the switcher's services did, in order: the interruptions each broadcast, the
    notes and contexts each handled."""

    def __init__(self, members: list[ScriptedLLM]) -> None:
        super().__init__(observe_every_push=False)
        self.members: list[Any] = list(members)
        self.log: list[tuple[str, int]] = []

    async def on_push_frame(self, data: FramePushed) -> None:
        if isinstance(data.frame, InterruptionFrame) and data.source in self.members:
            self.log.append(("interrupts", self.members.index(data.source)))

    async def on_process_frame(self, data: FrameProcessed) -> None:
        noted = isinstance(data.frame, LLMMessagesAppendFrame | LLMContextFrame)
        if noted and data.processor in self.members:
            self.log.append((type(data.frame).__name__, self.members.index(data.processor)))


def _hallucinating(request: SLMRequest) -> Answer:
    if request.kind != "adherence":
        return null_object(request)
    return verdict(violation=("hallucination", "take_payment"))


@pytest.mark.parametrize("active", [0, 1])
async def test_a_severe_correction_interrupts_and_is_answered_by_the_active_service(
    active: int,
) -> None:
    """The monitor is attached for the switcher (through its first service): a severe
    correction interrupts the service that infers now and that service answers it."""
    steward = Steward(load_agent(BOTS / "clinic"))
    await steward.start()
    steward.session.host_write({done_name(s): True for s in (*_AT_COPAY, "ask_copay")})
    queue: list[Any] = []
    members = [
        ScriptedLLM([FunctionStep(lambda _: queue.pop(0) if queue else ()) for _ in range(8)])
        for _ in range(2)
    ]
    switcher = LLMSwitcher(members, ServiceSwitcherStrategyManual)  # type: ignore[arg-type]
    steward.attach(switcher)
    seen = Handled(members)
    async with (
        ScriptedSLM(answer=_hallucinating) as slm,
        SLMClient(ledger=MemoryLedger()) as client,
    ):
        monitor = attach_monitor(steward, members[0], client, slm.stage())
        async with TextPipeline(switcher, observers=[*steward.observers, seen]) as pipeline:
            await pipeline.worker.queue_frame(ManuallySwitchServiceFrame(service=members[active]))
            for said in ("Your copay has been charged.", "You're all set, the payment is done."):
                queue[:] = [Say(said)]
                await pipeline.say("Can I pay?")
                await pipeline.settle()
                await steward.relay.bus.drain()
                await monitor.drain()
            await pipeline.settle()
        await monitor.aclose()
    corrections = [(c["severity"], c["channel"]) for c in monitor.stats.corrections]
    assert corrections == [("severe", "interrupt")]
    # The service that infers broadcast the interruption (both ways: its own generation
    # stops), took the note and answered it.
    assert seen.log[-5:] == [
        ("LLMContextFrame", active),
        ("interrupts", active),
        ("interrupts", active),
        ("LLMMessagesAppendFrame", active),
        ("LLMContextFrame", active),
    ]
    answered = members[active].inferences[-1].seen.notes
    assert any(n.startswith("[Procedure check]") for n in answered)
    assert len(members[1 - active].inferences) == 0  # the other never inferred
