"""Canaries: secrets never reach the logic_slm, the usage ledger, a trace or a log line.

A copy of the clinic bot gains sensitive variables and tools that echo secrets in allowlisted
result fields (``message``, ``*_id``, ``receipt``). Canary values are said by the caller
(inside and outside a secure capture), spoken by the agent, written by the host and echoed by
tools, while the monitor (adherence checks, gate judge calls) and the extractor run against a
local server. Every request body that server received, every ledger row, every captured log
line and every trace is then scanned for each canary in any spacing.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings
from tests.spoken_numbers import as_digits

# isort: split
import dataclasses
import json
import logging
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from loguru import logger

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.procedures import done_name
from pipecat_steward.pipecat.extractor import attach_extractor
from pipecat_steward.pipecat.monitor import attach_monitor
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger
from pipecat_steward.testing import Call, FunctionStep, Say, ScriptedLLM, TextPipeline
from pipecat_steward.testing.scripted_llm import ContextSnapshot
from pipecat_steward.testing.scripted_slm import (
    Answer,
    ScriptedSLM,
    SLMRequest,
    VerdictOracle,
    null_object,
)

CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"
CARD = "4111 1111 1111 1111"
SSN = "078-05-1120"
PASSWORD = "Tr0ub4dor-Canary"
CANARIES = {
    "card": re.compile(
        r"4\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}"
        r"1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1\D{0,3}1"
    ),
    "ssn": re.compile(r"0\D{0,3}7\D{0,3}8\D{0,3}0\D{0,3}5\D{0,3}1\D{0,3}1\D{0,3}2\D{0,3}0"),
    "password": re.compile(r"tr0ub4dor", re.I),
}
UNKNOWN_CARD = "5555 5555 5555 4444"  # Luhn-valid, never written by the host
UNKNOWN_SSN = "219-09-9999"  # said before the host writes member_ssn
UNKNOWN = {
    "card": re.compile(
        r"5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}"
        r"5\D{0,3}5\D{0,3}5\D{0,3}5\D{0,3}4\D{0,3}4\D{0,3}4\D{0,3}4"
    ),
    "ssn": re.compile(r"2\D{0,3}1\D{0,3}9\D{0,3}0\D{0,3}9\D{0,3}9\D{0,3}9\D{0,3}9\D{0,3}9"),
    "capture": re.compile(r"blue giraffe", re.I),
}
ECHO_TOOLS = '''

def verify_member(ssn: str) -> dict[str, Any]:
    """Check the member's social security number (echoes it, as careless backends do)."""
    return {"status": "ok", "message": f"member {ssn} verified", "member_id": ssn}


def store_card(card_number: str) -> dict[str, Any]:
    """Tokenize a card (echoes it in allowlisted fields)."""
    return {"status": "ok", "receipt": f"stored {card_number}", "card_id": card_number,
            "message": f"card {card_number} on file"}


def reset_portal(password: str) -> dict[str, Any]:
    """Set the patient portal password (echoes it)."""
    return {"status": "ok", "message": f"password set to {password}", "reset_id": password}
'''


def clinic_with_secrets(folder: Path) -> Path:
    shutil.copytree(CLINIC, folder)
    config: dict[str, Any] = yaml.safe_load((folder / "agent.yaml").read_text())
    config["variables"] += [
        {
            "name": "member_ssn",
            "type": "string",
            "sensitive": True,
            "description": "The SSN.",
            "digits": 9,
        },
        {"name": "card_number", "type": "string", "sensitive": True},
        {"name": "portal_password", "type": "string", "sensitive": True},
    ]
    config["tools"] += ["verify_member", "store_card", "reset_portal"]
    (folder / "agent.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (folder / "tools.py").write_text((folder / "tools.py").read_text() + ECHO_TOOLS)
    return folder


@dataclasses.dataclass
class Scan:
    bodies: list[str]
    ledger: list[str]
    logs: list[str]
    traces: list[str]
    pieces: list[str]
    """The model's streamed text as its log lines give it, each piece's line put back together."""


_PIECE = re.compile(
    r"Pushing LLMTextFrame#\d+\(pts: [^,]*, text: \[(.*)\]\) downstream from ScriptedLLM"
)


def pieces(logs: list[str]) -> list[str]:
    """The text of the model's pieces as logged when it pushed them, in order, joined."""
    return ["".join(m[1] for line in logs if (m := _PIECE.search(line)))]


def hits(texts: list[str], canaries: dict[str, re.Pattern[str]] = CANARIES) -> dict[str, int]:
    """How many texts hold each canary, its digits written or said in words."""
    return {
        name: sum(bool(rx.search(t) or rx.search(as_digits(t))) for t in texts)
        for name, rx in canaries.items()
    }


@asynccontextmanager
async def captured_logs(caplog: pytest.LogCaptureFixture) -> AsyncIterator[list[str]]:
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="TRACE")
    caplog.set_level(logging.DEBUG)
    try:
        yield lines
    finally:
        logger.remove(sink)
        lines += [r.getMessage() for r in caplog.records]


async def call_with_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, *, chunk: int | None = None
) -> Scan:
    oracle = VerdictOracle()

    def answer(request: SLMRequest) -> Answer:
        return null_object(request) if request.kind == "extraction" else oracle(request)

    agent = load_agent(clinic_with_secrets(tmp_path / "clinic"))
    queue: list[Any] = []

    def model(_: ContextSnapshot) -> Any:
        return queue.pop(0) if queue else ()

    ledger = MemoryLedger()
    async with captured_logs(caplog) as logs, ScriptedSLM(answer=answer) as slm:
        steward = Steward(agent)
        await steward.start()
        steward.session.host_write(DONE_BEFORE_PAYMENT)
        llm = ScriptedLLM([FunctionStep(model) for _ in range(40)], chunk=chunk)
        steward.attach(llm)
        async with SLMClient(ledger=ledger) as client:
            monitor = attach_monitor(steward, llm, client, slm.stage())
            reasons: set[str] = set()
            monitor.on_verdict = lambda request, _: reasons.add(str(request.reason))
            extractor = attach_extractor(steward, client, slm.stage())
            async with TextPipeline(llm, observers=steward.observers) as pipeline:

                async def turn(user: str, *steps: Any) -> None:
                    queue[:] = list(steps)
                    await pipeline.say(user)
                    await pipeline.settle()
                    await steward.relay.bus.drain()
                    await monitor.drain()
                    await extractor.drain()

                session = steward.session
                session.host_write({"member_ssn": SSN})  # the host knows it: by value from now
                await turn(
                    f"Hi, it's Ada Lovelace, my social is {SSN.replace('-', ' ')}",
                    Call("verify_member", {"ssn": SSN}),
                    Say(f"Thanks Ada, your member record {SSN} is verified."),
                )
                session.host_write({"secure_capture_active": True})
                await turn(CARD, Say("Got it."))  # never heard by an auxiliary model
                session.host_write({"secure_capture_active": False})
                await turn(
                    "Please keep that card on file",
                    Call("store_card", {"card_number": CARD.replace(" ", "")}),
                    Say(f"Your card {CARD} is stored and your copay has been charged."),
                )
                await turn("Did it work?", Say(f"Yes, card {CARD} was charged, the copay is paid."))
                await turn(
                    f"Also set my portal password to {PASSWORD}",
                    Call("reset_portal", {"password": PASSWORD}),
                    Say(f"Your password {PASSWORD} is set."),
                )
                session.host_write({"portal_password": PASSWORD})
                oracle.truth.add("ask_copay")  # the caller agrees now: the gate asks the judge
                await turn(
                    "Yes, charge the $40 copay now",
                    Call("collect_payment", {"patient_id": "pat-1815", "amount": 40}),
                    Say(f"Charged. Your member id {SSN} and password {PASSWORD} are on file."),
                )
                await turn("Thanks, what's next?", Say("I'll send the visit summary."))
            await monitor.aclose()
        kinds = {r.kind for r in slm.requests}
        gates = [g for t in steward.session.turns for g in t.gates]
        traces = [
            json.dumps(monitor.stats.__dict__, default=str),
            json.dumps(extractor.stats.__dict__, default=str),
        ]
    assert kinds == {"adherence", "extraction"}, kinds
    assert "judge_step" in reasons, reasons
    assert gates == [{"tool": "collect_payment", "decision": "allow"}]  # the judge settled it
    return Scan(
        bodies=[json.dumps(r.body) for r in slm.requests],
        ledger=[json.dumps(dataclasses.asdict(e)) for e in ledger.events],
        logs=logs,
        traces=traces,
        pieces=pieces(logs),
    )


@pytest.mark.parametrize("chunk", [None, 3], ids=["sentences", "streamed"])
async def test_no_canary_reaches_any_channel(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, chunk: int | None
) -> None:
    """With the model's reply in sentences, or streamed three characters a frame."""
    scan = await call_with_secrets(tmp_path, caplog, chunk=chunk)
    assert len(scan.bodies) >= 6 and scan.ledger and scan.logs and scan.pieces[0]
    assert any("verify_member" in b for b in scan.bodies)  # tool results were shown, redacted
    assert any("was charged, the copay is paid" in b for b in scan.bodies)  # the agent's claim
    found = {channel: hits(texts) for channel, texts in dataclasses.asdict(scan).items()}
    assert found == dict.fromkeys(found, {"card": 0, "ssn": 0, "password": 0})
    assert any("[secure capture: redacted]" in b for b in scan.bodies)


def records(steward: Steward) -> list[str]:
    """The session's turn records and their traces (what ``steward simulate`` prints)."""
    from pipecat_steward.testing.scenario import trace_turn

    session = steward.session
    made = [json.dumps(dataclasses.asdict(t), default=str) for t in session.turns]
    return made + [json.dumps(trace_turn(n, session, t)) for n, t in enumerate(session.turns)]


STEPS_BEFORE_PAYMENT = (
    "authenticate",
    "confirm_identity",
    "lookup_patient",
    "confirm_appointment",
    "headshot",
)
DONE_BEFORE_PAYMENT = {done_name(s): True for s in STEPS_BEFORE_PAYMENT} | {"copay_amount": 40}
"""The clinic's checklist done up to the payment, as its host writes it."""


# How a caller's numbers reach the steward: as a speech-to-text service writes them.
SAID = {
    "written": (UNKNOWN_SSN, UNKNOWN_CARD),
    "digit by digit": (
        "two one nine, oh nine, nine nine nine nine",
        "five five five five, five five five five, five five five five, four four four four",
    ),
    "in pairs": (
        "twenty one nine, oh nine, ninety nine ninety nine",
        "fifty five fifty five, fifty five fifty five, fifty five fifty five, forty four forty four",
    ),
    "repeated": (
        "two one nine oh nine triple nine nine",
        "double five double five double five double five double five double five four double four four",
    ),
}


async def call_with_unknown_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, said: str = "written"
) -> Scan:
    """Secrets said outside a capture before the host writes them, and a captured passphrase."""
    ssn, card = SAID[said]
    oracle = VerdictOracle()

    def answer(request: SLMRequest) -> Answer:
        return null_object(request) if request.kind == "extraction" else oracle(request)

    agent = load_agent(clinic_with_secrets(tmp_path / "clinic"))
    queue: list[Any] = []

    def model(_: ContextSnapshot) -> Any:
        return queue.pop(0) if queue else ()

    ledger = MemoryLedger()
    async with captured_logs(caplog) as logs, ScriptedSLM(answer=answer) as slm:
        steward = Steward(agent, supervise=False)
        steward.session.host_write(DONE_BEFORE_PAYMENT)
        llm = ScriptedLLM([FunctionStep(model) for _ in range(40)])
        steward.attach(llm)
        async with SLMClient(ledger=ledger) as client:
            monitor = attach_monitor(steward, llm, client, slm.stage())
            reasons: set[str] = set()
            monitor.on_verdict = lambda request, _: reasons.add(str(request.reason))
            extractor = attach_extractor(steward, client, slm.stage())
            async with TextPipeline(llm, observers=steward.observers) as pipeline:

                async def turn(user: str, *steps: Any) -> None:
                    queue[:] = list(steps)
                    await pipeline.say(user)
                    await pipeline.settle()
                    await steward.relay.bus.drain()
                    await monitor.drain()
                    await extractor.drain()

                session = steward.session
                await turn(
                    f"Hi it's Ada Lovelace, the number on my file is {ssn}",
                    Say("Thanks Ada."),
                )
                await turn(f"Just charge {card} for the copay", Say("I can take the payment now."))
                session.host_write({"secure_capture_active": True})
                await turn("blue giraffe seventeen", Say("Got it."))
                session.host_write({"secure_capture_active": False})
                oracle.truth.add("ask_copay")
                await turn(
                    "Yes, charge the $40 copay now",
                    Call("collect_payment", {"patient_id": "pat-1815", "amount": 40}),
                    Say("Charged."),
                )
                session.host_write({"member_ssn": UNKNOWN_SSN})  # the host learns it only now
                await turn("Thanks, what's next?", Say("I'll send the visit summary."))
            await monitor.aclose()
        kinds = {r.kind for r in slm.requests}
        traces = [
            json.dumps(monitor.stats.__dict__, default=str),
            json.dumps(extractor.stats.__dict__, default=str),
            *records(steward),
        ]
        gates = [g for t in steward.session.turns for g in t.gates]
    assert kinds == {"adherence", "extraction"}, kinds
    assert "judge_step" in reasons, reasons  # a gate judge call was made
    assert gates == [{"tool": "collect_payment", "decision": "allow"}]
    return Scan(
        bodies=[json.dumps(r.body) for r in slm.requests],
        ledger=[json.dumps(dataclasses.asdict(e)) for e in ledger.events],
        logs=logs,
        traces=traces,
        pieces=pieces(logs),
    )


@pytest.mark.parametrize("said", sorted(SAID))
async def test_a_secret_said_before_it_is_known_reaches_no_channel(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, said: str
) -> None:
    scan = await call_with_unknown_secrets(tmp_path, caplog, said)
    assert len(scan.bodies) >= 4 and scan.ledger and scan.logs and scan.traces
    assert any("Ada Lovelace" in b for b in scan.bodies)  # the utterances were sent, redacted
    found = {channel: hits(texts, UNKNOWN) for channel, texts in dataclasses.asdict(scan).items()}
    assert found == dict.fromkeys(found, {"card": 0, "ssn": 0, "capture": 0})
    assert any("[secure capture: redacted]" in t for t in scan.traces)


async def test_turn_records_and_traces_keep_no_canary(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent = load_agent(clinic_with_secrets(tmp_path / "clinic"))
    steward = Steward(agent, supervise=False)  # no monitor at all: records are still redacted
    queue: list[Any] = []
    llm = ScriptedLLM([FunctionStep(lambda _: queue.pop(0) if queue else ()) for _ in range(20)])
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers) as pipeline:

        async def turn(user: str, *steps: Any) -> None:
            queue[:] = list(steps)
            await pipeline.say(user)
            await pipeline.settle()

        session = steward.session
        session.host_write({"member_ssn": SSN})
        await turn(
            f"my social is {SSN}", Call("verify_member", {"ssn": SSN}), Say(f"{SSN} verified.")
        )
        session.host_write({"secure_capture_active": True})
        await turn(CARD, Say("Got it."))
        session.host_write({"secure_capture_active": False})
        await turn(
            "keep it on file",
            Call("store_card", {"card_number": CARD}),
            Say(f"Card {CARD} stored."),
        )
        await turn(
            f"password is {PASSWORD}", Call("reset_portal", {"password": PASSWORD}), Say("Set.")
        )
    texts = records(steward)
    assert any("verify_member" in t for t in texts) and any("store_card" in t for t in texts)
    assert hits(texts) == {"card": 0, "ssn": 0, "password": 0}
    assert sum("[secure capture: redacted]" in t for t in texts) >= 2


@pytest.mark.parametrize("monitor", [[], ["--monitor"]], ids=["plain", "monitor"])
def test_steward_simulate_prints_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monitor: list[str]
) -> None:
    from pipecat_steward.cli.main import main

    scenario = tmp_path / "secrets.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "name": "secrets",
                "turns": [
                    {"user": "Hi, it's Ada Lovelace"},
                    {"user": CARD, "variables": {"secure_capture_active": True}},
                    {
                        "user": f"just charge {UNKNOWN_CARD} instead",
                        "variables": {"secure_capture_active": False},
                    },
                ],
            }
        )
    )
    assert main(["simulate", *monitor, str(CLINIC), str(scenario)]) == 0
    out = capsys.readouterr().out
    assert "[2] caller: [secure capture: redacted]" in out
    assert hits([out]) == {"card": 0, "ssn": 0, "password": 0}
    assert hits([out], UNKNOWN)["card"] == 0
