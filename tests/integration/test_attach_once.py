"""A steward steers one LLM service, attached once; every other attach is refused untouched.

Attached twice to one service, a steward decided every inference twice and the call skipped
its steps; two stewards on one service both steered it; something that is no LLM service
failed on a missing method. Each case below is refused with its reason before the service or
the steward changes, and a call whose second attach was refused plays as if it never came.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.pipeline.service_switcher import ServiceSwitcherStrategyManual
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
from pipecat.services.tts_service import TTSService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.exceptions import ConfigError, StewardError
from pipecat_steward.pipecat.hook import StewardLLMMixin
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.player import scenario_setup
from pipecat_steward.testing.scenario import before_turn, load_scenario
from pipecat_steward.testing.script import Say
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.simulate import ScriptedModel, scenario_step

BOTS = Path(__file__).resolve().parents[2] / "bots"
AGENT = load_agent(BOTS / "bella_notte")
SPARE = 12  # scripted inferences kept ready per turn (the model answers from the scenario)


class MixinLLM(StewardLLMMixin, ScriptedLLM):
    """A service that takes the hook through the mixin instead of a wrapped process_frame."""


def realtime() -> OpenAIRealtimeLLMService:
    return OpenAIRealtimeLLMService(api_key="test", base_url="ws://127.0.0.1:9")


def cascaded() -> ScriptedLLM:
    return ScriptedLLM([Say("Hello.")])


def mixin() -> MixinLLM:
    return MixinLLM([Say("Hello.")])


def same_service_twice(service: Callable[[], Any]) -> Callable[[], None]:
    def case() -> None:
        steward, llm = Steward(AGENT), service()
        steward.attach(llm)
        _refused_untouched(lambda: steward.attach(llm), llm, StewardError, "attach it once")

    return case


def second_service(service: Callable[[], Any]) -> Callable[[], None]:
    def case() -> None:
        steward, other = Steward(AGENT), service()
        steward.attach(service())
        _refused_untouched(lambda: steward.attach(other), other, StewardError, "another service")

    return case


def second_steward(service: Callable[[], Any]) -> Callable[[], None]:
    def case() -> None:
        llm = service()
        Steward(AGENT).attach(llm)
        _refused_untouched(
            lambda: Steward(AGENT).attach(llm), llm, StewardError, "already has a steward"
        )

    return case


def s2s_twice() -> None:
    steward, llm = StewardS2S(AGENT), realtime()
    steward.attach_s2s(llm)
    _refused_untouched(lambda: steward.attach_s2s(llm), llm, StewardError, "attach it once")


def s2s_then_cascaded() -> None:
    steward, llm = StewardS2S(AGENT), cascaded()
    steward.attach_s2s(realtime())
    _refused_untouched(lambda: steward.attach(llm), llm, StewardError, "another service")


def cascaded_then_s2s() -> None:
    steward, llm = StewardS2S(AGENT), realtime()
    steward.attach(cascaded())
    _refused_untouched(lambda: steward.attach_s2s(llm), llm, StewardError, "another service")


def second_s2s_steward() -> None:
    llm = realtime()
    StewardS2S(AGENT).attach_s2s(llm)
    _refused_untouched(
        lambda: StewardS2S(AGENT).attach_s2s(llm), llm, StewardError, "already has a steward"
    )


def wrong_kind(host: type[Steward], method: str, thing: Callable[[], Any], words: str):
    def case() -> None:
        llm = thing()
        steward = host(AGENT)
        _refused_untouched(lambda: getattr(steward, method)(llm), llm, TypeError, words)
        assert steward.hook is None

    return case


class _TTS(TTSService):
    async def run_tts(self, text: str, context_id: str):  # pragma: no cover - never run
        yield None


def switcher(*services: Any) -> LLMSwitcher:
    return LLMSwitcher(list(services), ServiceSwitcherStrategyManual)


def switcher_member_taken(taken_by: Callable[[Any], Any]) -> Callable[[], None]:
    """A switcher one of whose services is steered already: none of them is touched."""

    def case() -> None:
        free, taken = cascaded(), mixin()
        taken_by(taken)
        steward = Steward(AGENT)
        before = _looks(free)
        _refused_untouched(
            lambda: steward.attach(switcher(free, taken)), taken, StewardError, "already"
        )
        assert _looks(free) == before and steward.hook is None
        assert steward.attach(cascaded()) is not None  # the refused attach claimed nothing

    return case


def switcher_after_member() -> None:
    steward, member, other = Steward(AGENT), cascaded(), cascaded()
    steward.attach(member)
    _refused_untouched(lambda: steward.attach(switcher(other, member)), other, StewardError, "once")


def switcher_then_member() -> None:
    steward, free = Steward(AGENT), cascaded()
    member = cascaded()
    steward.attach(switcher(member, free))
    _refused_untouched(lambda: Steward(AGENT).attach(member), member, StewardError, "already")


def switcher_wrong_member(member: Callable[[], Any], words: str) -> Callable[[], None]:
    def case() -> None:
        free = cascaded()
        steward = Steward(AGENT)
        _refused_untouched(lambda: steward.attach(switcher(free, member())), free, TypeError, words)
        assert steward.hook is None

    return case


def switcher_service_twice() -> None:
    llm = cascaded()
    _refused_untouched(
        lambda: Steward(AGENT).attach(switcher(llm, llm)), llm, StewardError, "one service twice"
    )


NOT_LLM = "takes a pipecat LLM service"
CASES: dict[str, Callable[[], None]] = {
    "same cascaded service twice": same_service_twice(cascaded),
    "same mixin service twice": same_service_twice(mixin),
    "a second cascaded service": second_service(cascaded),
    "a second mixin service": second_service(mixin),
    "a second steward on a cascaded service": second_steward(cascaded),
    "a second steward on a mixin service": second_steward(mixin),
    "speech-to-speech service twice": s2s_twice,
    "speech-to-speech, then a cascaded service": s2s_then_cascaded,
    "cascaded, then a speech-to-speech service": cascaded_then_s2s,
    "a second steward on a speech-to-speech service": second_s2s_steward,
    "attach(None)": wrong_kind(Steward, "attach", lambda: None, NOT_LLM),
    "attach(object)": wrong_kind(Steward, "attach", object, NOT_LLM),
    "attach(a TTS service)": wrong_kind(Steward, "attach", _TTS, NOT_LLM),
    "attach(a service name)": wrong_kind(Steward, "attach", lambda: "openai", NOT_LLM),
    "attach(a speech-to-speech service)": wrong_kind(
        Steward, "attach", realtime, "use StewardS2S(...).attach_s2s(llm)"
    ),
    "StewardS2S.attach(a speech-to-speech service)": wrong_kind(
        StewardS2S, "attach", realtime, "use StewardS2S(...).attach_s2s(llm)"
    ),
    "attach_s2s(a cascaded service)": wrong_kind(
        StewardS2S, "attach_s2s", cascaded, "is a cascaded LLM service"
    ),
    "attach_s2s(None)": wrong_kind(StewardS2S, "attach_s2s", lambda: None, NOT_LLM),
    "a switcher with a service another steward has": switcher_member_taken(
        lambda llm: Steward(AGENT).attach(llm)
    ),
    "a switcher, after one of its services": switcher_after_member,
    "a switcher's service, to a second steward": switcher_then_member,
    "a switcher holding a speech-to-speech service": switcher_wrong_member(
        realtime, "use StewardS2S(...).attach_s2s(llm)"
    ),
    "a switcher holding a TTS service": switcher_wrong_member(_TTS, NOT_LLM),
    "a switcher holding one service twice": switcher_service_twice,
    "attach_s2s(a switcher)": wrong_kind(
        StewardS2S, "attach_s2s", lambda: switcher(cascaded(), cascaded()), NOT_LLM
    ),
}


def _refused_untouched(attach: Callable[[], Any], llm: Any, error: type, words: str) -> None:
    """``attach`` raises ``error`` naming ``words``; ``llm`` is as it was before."""
    before = _looks(llm)
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        attach()
    assert _looks(llm) == before


def _looks(llm: Any) -> tuple[Any, ...]:
    """What an attach changes on a service: its frame handler, hook and registered tools."""
    functions = dict(getattr(llm, "_functions", {}))
    return (
        getattr(llm, "process_frame", None),
        getattr(llm, "steward_hook", None),
        {name: item.handler for name, item in functions.items()},
    )


@pytest.mark.parametrize("name", list(CASES))
def test_an_attach_that_would_steer_twice_is_refused(name: str) -> None:
    CASES[name]()


def test_the_first_attach_of_each_kind_is_taken() -> None:
    assert Steward(AGENT).attach(cascaded()) is not None
    assert Steward(AGENT).attach(mixin()).llm is not None
    steward = StewardS2S(AGENT)
    assert steward.attach_s2s(realtime()) is steward


async def _call(attach_again: bool) -> tuple[list[str], list[int]]:
    """Bella's happy path through the real pipeline; what the bot said, decisions per turn."""
    scenario = load_scenario(BOTS / "bella_notte" / "scenarios" / "happy_path.yaml")
    loaded, clock, options = scenario_setup(AGENT, scenario)
    steward = Steward(loaded, clock=clock, **options)
    await steward.start()
    model = ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(SPARE)])
    steward.attach(llm)
    if attach_again:
        with pytest.raises(StewardError, match="attach it once"):
            steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        for turn in scenario.turns:
            before_turn(steward.session, turn)
            model.queue = [scenario_step(i) for i in turn.llm]
            llm.extend(FunctionStep(model) for _ in range(SPARE - llm.remaining))
            await pipeline.say(turn.user)
            await pipeline.settle()
    return list(pipeline.spoken), [len(t.actions) for t in steward.session.turns]


async def test_a_refused_second_attach_leaves_the_call_as_it_plays() -> None:
    """The call with its second attach refused is the call without one: same words, and the
    engine decides each inference once."""
    assert await _call(attach_again=True) == await _call(attach_again=False)


@pytest.mark.parametrize("name", ["agent.yaml", "tools.py"])
def test_an_agent_file_for_its_folder_is_told_the_folder(name: str) -> None:
    with pytest.raises(ConfigError, match="is a file, not an agent folder; name its folder"):
        Steward.from_folder(BOTS / "bella_notte" / name)
