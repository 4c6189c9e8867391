"""The ``Steward`` entry points attach the monitor and the extractor themselves, exactly once."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split
import shutil
from pathlib import Path
from typing import Any

import pytest
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.events import BotStartedSpeaking, BotStoppedSpeaking, UserTranscript
from pipecat_steward.pipecat.extractor import attach_extractor
from pipecat_steward.pipecat.monitor import attach_monitor
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.pipecat.supervise import attach_supervision
from pipecat_steward.slm import SLMClient
from pipecat_steward.testing.scripted_slm import ScriptedSLM

BOTS = Path(__file__).resolve().parents[2] / "bots"
CLINIC = BOTS / "clinic"


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A logic_slm key is present (nothing is called: the tests only attach)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.delenv("STEWARD_MONITOR_ENABLED", raising=False)


def _cascaded(folder: Path = CLINIC, **kwargs: Any) -> Steward:
    steward = Steward.from_folder(folder, **kwargs)
    llm: Any = OpenAILLMService(api_key="sk-test-dummy")
    steward.attach(llm)
    return steward


def _realtime() -> StewardS2S:
    steward = StewardS2S.from_folder(CLINIC)
    llm: Any = OpenAIRealtimeLLMService(api_key="sk-test-dummy")
    steward.attach_s2s(llm)
    return steward


def _subscribers(steward: Steward, name: str) -> int:
    return sum(1 for sub in steward.relay.bus._subs if sub.name == name)


@pytest.mark.parametrize("build", [_cascaded, _realtime], ids=["cascaded", "realtime"])
def test_attaching_the_steward_attaches_its_monitor_and_extractor(key: None, build: Any) -> None:
    steward = build()
    assert steward.monitor is not None and steward.extractor is not None
    assert steward.session.judge == steward.monitor.judge
    assert _subscribers(steward, "procedure-monitor") == 1
    assert _subscribers(steward, "entity-extractor") == 1


@pytest.mark.parametrize(
    ("env", "kwargs"),
    [
        ({"OPENAI_API_KEY": None}, {}),  # no credentials: the logic_slm does not resolve
        ({"STEWARD_MONITOR_ENABLED": "0"}, {}),  # the kill switch
        ({}, {"supervise": False}),  # the host opts out
    ],
    ids=["no-key", "kill-switch", "opt-out"],
)
def test_without_a_resolvable_logic_slm_the_steward_stays_unsupervised(
    key: None, monkeypatch: pytest.MonkeyPatch, env: dict[str, str | None], kwargs: dict[str, Any]
) -> None:
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    steward = _cascaded(**kwargs)
    assert steward.monitor is None and steward.extractor is None
    assert steward.session.judge is None
    assert not steward.session.result_riders
    assert _subscribers(steward, "procedure-monitor") == 0


def test_an_agent_without_judge_steps_or_extraction_gets_no_monitor(key: None) -> None:
    steward = _cascaded(BOTS / "bella_notte")
    assert steward.monitor is None and steward.extractor is None
    assert steward.session.judge is None


async def test_a_monitor_attached_by_hand_replaces_the_automatic_one(key: None) -> None:
    steward = _cascaded()
    automatic = steward.monitor
    assert automatic is not None
    async with ScriptedSLM() as slm, SLMClient() as client:
        explicit = attach_monitor(steward, None, client, slm.stage(), rider=True)
        extractor = attach_extractor(steward, client, slm.stage())
        assert steward.monitor is explicit and steward.extractor is extractor
        assert steward.session.judge == explicit.judge
        assert _subscribers(steward, "procedure-monitor") == 1
        assert _subscribers(steward, "entity-extractor") == 1
        assert steward.session.result_riders == [explicit.take_rider]
        assert steward.supervision is None  # the automatic pair is gone, not half-kept
        await explicit.aclose()


async def test_the_extractor_is_woken_for_caller_transcripts_only(key: None) -> None:
    """The bus hands the extractor the one kind it reads; the monitor still gets every event.

    A turn's other relay events (the bot speaking, text, tool calls) would each wake the
    extractor's task for nothing.
    """
    steward = _cascaded()
    bus = steward.relay.bus
    subs = {sub.name: sub for sub in bus.subscriptions}
    for event in (BotStartedSpeaking(at_ns=1), BotStoppedSpeaking(at_ns=2)):
        bus.publish(event)
    assert await bus.drain()
    assert subs["entity-extractor"].stats.delivered == 0
    assert subs["procedure-monitor"].stats.delivered == 2
    assert subs["entity-extractor"].kinds == (UserTranscript,)
    await bus.aclose()


def test_attaching_supervision_twice_is_idempotent(key: None) -> None:
    steward = _cascaded()
    first = attach_supervision(steward, None)
    assert first is not None and attach_supervision(steward, None) is first
    assert first.monitor is steward.monitor
    assert _subscribers(steward, "procedure-monitor") == 1


def test_the_kill_switch_given_later_detaches_the_automatic_monitor(key: None) -> None:
    steward = _cascaded()
    assert steward.monitor is not None
    assert attach_supervision(steward, None, env={"STEWARD_MONITOR_ENABLED": "0"}) is None
    assert steward.monitor is None and steward.session.judge is None
    assert _subscribers(steward, "procedure-monitor") == 0
    assert _subscribers(steward, "entity-extractor") == 0


def test_the_small_model_comes_from_the_agent_as_loaded_not_from_its_folder_again(
    key: None, tmp_path: Path
) -> None:
    """A worker loads an agent once and attaches it to every call: no call reads the folder.

    The folder's agent.yaml is gone after loading; every call still gets the small model its
    ``aux:`` named when the agent was loaded.
    """
    folder = tmp_path / "clinic"
    shutil.copytree(CLINIC, folder)
    agent = load_agent(folder)
    (folder / "agent.yaml").unlink()
    for _ in range(3):
        steward = Steward(agent)
        steward.attach(OpenAILLMService(api_key="sk-test-dummy"))
        assert steward.monitor is not None and steward.extractor is not None
        assert steward.monitor.stage == steward.extractor.stage
