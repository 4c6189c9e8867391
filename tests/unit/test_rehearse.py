"""`steward rehearse`: missing provider settings are named (exit 2); the live pipeline builds offline."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path

import pytest
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

from pipecat_steward.cli import rehearse
from pipecat_steward.cli.main import main
from pipecat_steward.pipecat.steward import Steward

BOTS = Path(__file__).resolve().parents[2] / "bots"
PROVIDER_VARS = [
    "OPENAI_API_KEY",
    "STEWARD_LLM_BASE_URL",
    "STEWARD_LLM_API_KEY",
    "STEWARD_LLM_MODEL",
    "DEEPGRAM_API_KEY",
    "CARTESIA_API_KEY",
    "CARTESIA_VOICE_ID",
]


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in PROVIDER_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_without_keys_it_exits_2_and_names_every_missing_variable(no_keys, capsys):
    code = main(["rehearse", str(BOTS / "lead_capture")])
    err = capsys.readouterr().err
    assert code == 2
    for name in ("OPENAI_API_KEY", "STEWARD_LLM_BASE_URL", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY"):
        assert f"  {name}: " in err, name  # each variable explained on its own line
    assert "LLM: set OPENAI_API_KEY or STEWARD_LLM_BASE_URL" in err
    assert "speech-to-text: set DEEPGRAM_API_KEY or OPENAI_API_KEY" in err
    assert "text-to-speech: set CARTESIA_API_KEY or OPENAI_API_KEY" in err


def test_a_self_hosted_llm_still_needs_speech_keys(no_keys, capsys):
    no_keys.setenv("STEWARD_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    assert main(["rehearse", str(BOTS / "lead_capture")]) == 2
    err = capsys.readouterr().err
    assert "LLM:" not in err
    assert "DEEPGRAM_API_KEY" in err and "CARTESIA_API_KEY" in err


def test_an_openai_key_alone_serves_every_role():
    assert rehearse.missing({"OPENAI_API_KEY": "sk-dummy"}) == []


def test_a_missing_agent_folder_exits_2(no_keys, tmp_path, capsys):
    assert main(["rehearse", str(tmp_path / "nowhere")]) == 2
    assert "steward rehearse:" in capsys.readouterr().err


def _transport() -> SmallWebRTCTransport:
    params = TransportParams(audio_in_enabled=True, audio_out_enabled=True)
    return SmallWebRTCTransport(SmallWebRTCConnection(), params)


def test_with_dummy_keys_the_deepgram_cartesia_pipeline_builds():
    env = {"OPENAI_API_KEY": "sk-dummy", "DEEPGRAM_API_KEY": "dg", "CARTESIA_API_KEY": "ca"}
    built = rehearse.build_rehearsal(BOTS / "lead_capture", _transport(), env)
    assert [type(s).__name__ for s in built.services.values()] == [
        "DeepgramSTTService",
        "OpenAILLMService",
        "CartesiaTTSService",
    ]
    assert isinstance(built.steward, Steward) and built.steward.hook is not None
    assert built.worker is not None


def test_with_a_self_hosted_llm_and_openai_speech_the_pipeline_builds():
    env = {
        "OPENAI_API_KEY": "sk-dummy",
        "STEWARD_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
        "STEWARD_LLM_MODEL": "local-model",
    }
    built = rehearse.build_rehearsal(BOTS / "bella_notte", _transport(), env)
    llm = built.services["llm"]
    assert [type(s).__name__ for s in built.services.values()] == [
        "OpenAISTTService",
        "OpenAILLMService",
        "OpenAITTSService",
    ]
    assert str(llm._client.base_url) == "http://127.0.0.1:8080/v1/"


def test_the_clinic_rehearses_with_its_monitor_and_extractor_attached():
    env = {"OPENAI_API_KEY": "sk-dummy", "DEEPGRAM_API_KEY": "dg", "CARTESIA_API_KEY": "ca"}
    built = rehearse.build_rehearsal(BOTS / "clinic", _transport(), env)
    supervision = built.supervision
    assert supervision is not None and supervision.monitor is not None
    assert supervision.extractor is not None
    assert built.steward.session.judge == supervision.monitor.judge  # judge steps can complete


def test_the_kill_switch_rehearses_with_deterministic_gates_only():
    env = {
        "OPENAI_API_KEY": "sk-dummy",
        "DEEPGRAM_API_KEY": "dg",
        "CARTESIA_API_KEY": "ca",
        "STEWARD_MONITOR_ENABLED": "0",
    }
    built = rehearse.build_rehearsal(BOTS / "clinic", _transport(), env)
    assert built.supervision is None and built.steward.session.judge is None
