"""Provider adapters: chosen once from the service's class; each registered, documented and faked."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import re
from pathlib import Path
from typing import Any

import pytest

import pipecat_steward.testing.servers as servers
from pipecat_steward.pipecat import providers
from pipecat_steward.pipecat.channels import CHANNELS
from pipecat_steward.pipecat.providers import (
    ADAPTERS,
    CascadedAdapter,
    GeminiLiveAdapter,
    LLMKind,
    NovaSonicAdapter,
    OpenAIRealtimeAdapter,
    ProviderAdapter,
    adapter_for,
)
from pipecat_steward.testing import ScriptedLLM

DOCS = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


def _subclasses(cls: type[ProviderAdapter]) -> set[type[ProviderAdapter]]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(c) for c in found)) if found else found


def openai_realtime(**session: Any) -> Any:
    from pipecat.services.openai.realtime import events
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    settings = OpenAIRealtimeLLMService.Settings(
        system_instruction="Base.", session_properties=events.SessionProperties(**session)
    )
    return OpenAIRealtimeLLMService(api_key="test", base_url="ws://127.0.0.1:9", settings=settings)


def gemini_live() -> Any:
    from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

    return GeminiLiveLLMService(api_key="test")


def nova_sonic() -> Any:
    pytest.importorskip("aws_sdk_bedrock_runtime", reason="Nova Sonic needs Python >= 3.12")
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    # Only the class matters here; the constructor opens a sound file it never closes.
    return AWSNovaSonicLLMService.__new__(AWSNovaSonicLLMService)


def realtime_subclass() -> Any:
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

    class Tuned(OpenAIRealtimeLLMService):
        pass

    return Tuned(api_key="test", base_url="ws://127.0.0.1:9")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: None, CascadedAdapter),
        (ScriptedLLM, CascadedAdapter),
        (object, CascadedAdapter),
        (openai_realtime, OpenAIRealtimeAdapter),
        (realtime_subclass, OpenAIRealtimeAdapter),
        (gemini_live, GeminiLiveAdapter),
        (nova_sonic, NovaSonicAdapter),
    ],
    ids=["none", "scripted", "object", "openai_realtime", "subclass", "gemini_live", "nova_sonic"],
)
def test_the_adapter_is_chosen_from_the_service_class(make: Any, expected: type) -> None:
    llm = make()
    adapter = adapter_for(llm)
    assert type(adapter) is expected and adapter.llm is llm
    assert adapter.speech_to_speech is (expected is not CascadedAdapter)


def test_every_adapter_is_registered_once_with_its_own_row() -> None:
    assert _subclasses(ProviderAdapter) == set(ADAPTERS.values())
    assert set(ADAPTERS) == set(LLMKind)
    for kind, adapter in ADAPTERS.items():
        assert adapter.kind is kind and adapter.channels.kind is kind
        assert CHANNELS[kind] is adapter.channels
    speech_to_speech = {a for a in ADAPTERS.values() if a is not CascadedAdapter}
    assert set(providers.SPEECH_TO_SPEECH) == speech_to_speech


def _docs_rows() -> dict[str, str]:
    """Adapter class name → fake server name, from the providers table in docs/providers.md."""
    text = DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\|[^|\n]*\|[^|\n]*\| `\w+\.(\w+Adapter)` \| `(\w+)` \|$", text, re.M)
    return dict(rows)


def test_every_adapter_has_a_docs_row_naming_a_fake_that_exists() -> None:
    rows = _docs_rows()
    assert set(rows) == {a.__name__ for a in ADAPTERS.values()}
    for fake in rows.values():
        assert fake in servers.__all__ and isinstance(getattr(servers, fake), type)


@pytest.mark.parametrize(
    ("create_response", "needed"), [(False, True), (True, False), (None, False)]
)
def test_openai_realtime_asks_for_the_reply_only_when_the_session_will_not(
    create_response: bool | None, needed: bool
) -> None:
    from pipecat.services.openai.realtime import events

    session: dict[str, Any] = {}
    if create_response is not None:
        detection = events.SemanticTurnDetection(create_response=create_response)
        session["audio"] = events.AudioConfiguration(
            input=events.AudioInput(turn_detection=detection)
        )
    assert adapter_for(openai_realtime(**session)).needs_response_request() is needed


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("make", [ScriptedLLM, gemini_live, nova_sonic], ids=str)
def test_services_that_answer_by_themselves_need_no_reply_request(make: Any) -> None:
    assert adapter_for(make()).needs_response_request() is False


def test_openai_realtime_advertises_the_tools_before_the_session_starts() -> None:
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

    llm = openai_realtime()
    schema = FunctionSchema(name="set_date", description="d", properties={}, required=[])
    tools = ToolsSchema(standard_tools=[schema])
    adapter_for(llm).advertise_tools(tools)
    assert llm.settings.session_properties.tools is tools
