"""Pytest fixtures for logic_slm tests; import them into a test module to use them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from tests.slm_support.fake_server import FakeProviderServer

from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger

DUMMY_ENV = {
    "OPENAI_API_KEY": "sk-test-dummy",
    "GEMINI_API_KEY": "gemini-test-dummy",
    "AWS_ACCESS_KEY_ID": "AKIATESTDUMMY",
    "AWS_SECRET_ACCESS_KEY": "test-dummy-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    # No instance-metadata lookups: they would leave the machine.
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture
def slm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Dummy credentials for every provider; nothing real is configured or reachable."""
    inherited = (
        "OPENAI_BASE_URL",
        "GOOGLE_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
    )
    for name in inherited:
        monkeypatch.delenv(name, raising=False)
    for name, value in DUMMY_ENV.items():
        monkeypatch.setenv(name, value)
    yield


@pytest.fixture
async def slm_server() -> AsyncIterator[FakeProviderServer]:
    """A scripted provider server on 127.0.0.1 (a free port), stopped after the test."""
    server = FakeProviderServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def slm_ledger() -> MemoryLedger:
    """An in-memory usage ledger."""
    return MemoryLedger()


@pytest.fixture
async def slm_client(slm_env: None, slm_ledger: MemoryLedger) -> AsyncIterator[SLMClient]:
    """A client metering into ``slm_ledger``, closed after the test."""
    async with SLMClient(ledger=slm_ledger) as client:
        yield client
