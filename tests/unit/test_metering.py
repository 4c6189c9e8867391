"""Metering is on by default and `steward report` shows the observed spend in dollars."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.cli.main import main
from pipecat_steward.core.costing import UsageEvent
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import NullLedger, SQLiteLedger, default_ledger


def test_a_client_without_a_ledger_meters_to_the_default_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEWARD_LEDGER", str(tmp_path / "usage.sqlite"))
    client = SLMClient()
    assert client.ledger is default_ledger()
    assert isinstance(SLMClient(ledger=NullLedger()).ledger, NullLedger)  # opting out is explicit


def event(session: str, agent: str, provider: str, model: str, tokens: tuple[int, int]) -> UsageEvent:
    return UsageEvent(
        provider=provider,
        model=model,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        latency_ms=12.0,
        scope="adherence",
        agent_id=agent,
        session_id=session,
    )


def test_steward_report_prints_dollars_per_call_and_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "usage.sqlite"
    with SQLiteLedger(path) as ledger:
        ledger.record(event("call-1", "clinic", "openai", "gpt-4.1-mini", (1_000_000, 0)))
        ledger.record(event("call-1", "clinic", "openai", "gpt-4.1-mini", (0, 500_000)))
        ledger.record(event("call-2", "clinic", "openai_compatible", "llama-local", (2000, 100)))
        ledger.record(event("call-3", "orders", "acme", "mystery", (10, 10)))
        ledger.flush()
    assert main(["report", "--ledger", str(path)]) == 0
    out = capsys.readouterr().out
    call_1 = next(line for line in out.splitlines() if line.strip().startswith("call-1"))
    assert "2 calls" in call_1 and "$1.200000" in call_1  # 0.40 + 0.5 * 1.60
    call_2 = next(line for line in out.splitlines() if line.strip().startswith("call-2"))
    assert "$0.000000" in call_2 and "self-hosted" in call_2.lower()
    clinic = next(line for line in out.splitlines() if line.strip().startswith("clinic"))
    assert "3 calls" in clinic and "$1.200000" in clinic
    assert "unpriced: acme/mystery" in out and "status: partial" in out


def test_steward_report_without_a_ledger_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--ledger", str(tmp_path / "none.sqlite")]) == 2
    assert "no usage ledger" in capsys.readouterr().err
