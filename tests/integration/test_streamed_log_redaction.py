"""A secret streamed a few characters per frame reaches no log line, not even in pieces.

A model's reply streams a few characters per frame, and a TTS service times each word. pipecat
logs every frame: at TRACE as it pushes it, in its debug log observer and in its LLM log
observer. A card or a password read back would reach the log a piece per line, each piece too
short to be told from any other text, and the pieces together the secret. Here the lines come
from pipecat's own observers (and its push line, written as pipecat writes it), through the
process's installed log redaction.
"""

from __future__ import annotations

import asyncio
import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loguru import logger
from pipecat.frames.frames import Frame, LLMTextFrame, TTSTextFrame
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.observers.loggers.debug_log_observer import DebugLogObserver
from pipecat.observers.loggers.llm_log_observer import LLMLogObserver
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.openai.llm import OpenAILLMService
from tests.integration.test_canaries import clinic_with_secrets
from tests.spoken_numbers import UNITS, as_digits, pair

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.core.redaction import PLACEHOLDER
from pipecat_steward.pipecat.redaction import (
    SECURE_CAPTURE_VARIABLE,
    install_log_redaction,
    redact_everywhere,
    secrets_for,
)
from pipecat_steward.runtime.engine import open_session

CARD = "4000 1234 5678 9010"
PASSWORD = "opaltiger"
READINGS = ["written", "one by one", "in pairs"]
KINDS = [LLMTextFrame, TTSTextFrame]
# Each log's text value, as each of pipecat's loggers prints a frame's text.
VALUES = {
    "push": re.compile(r"text: \[(.*?)\](?:\)|, \w+: )"),
    "debug": re.compile(r"text: '(.*?)'"),
    "llm": re.compile(r"GENERATING: '(.*)' at"),
}


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    return load_agent(clinic_with_secrets(tmp_path_factory.mktemp("streamed") / "clinic"))


@contextmanager
def captured() -> Iterator[list[str]]:
    """The log lines written meanwhile, through the process's installed redaction."""
    install_log_redaction()
    lines: list[str] = []
    sink = logger.add(lines.append, level="TRACE", format="{message}")
    try:
        yield lines
    finally:
        logger.remove(sink)


def said(card: str, how: str) -> list[str]:
    """The words of ``card`` as a model writes them: digits, digit by digit, or in pairs."""
    digits = card.replace(" ", "")
    if how == "written":
        return card.split()
    if how == "one by one":
        return [UNITS[int(d)] for d in digits]
    pairs = [digits[i : i + 2] for i in range(0, len(digits), 2)]
    return [pair(int(p)) if p[0] != "0" else f"oh {UNITS[int(p[1])]}" for p in pairs]


def streamed(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut anywhere into pieces, as a model streams it a few characters at a time."""
    bounds = sorted({0, len(text), *(c % len(text) for c in cuts)})
    return [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def frame_of(kind: type[Frame], text: str) -> Frame:
    if kind is TTSTextFrame:
        return TTSTextFrame(text=text, text_type="word")  # a TTS service times each word
    return LLMTextFrame(text=text)


async def log_pieces(pieces: list[str], kind: type[Frame]) -> None:
    """Have pipecat's loggers log each piece's frame, pushed from an LLM service to a TTS."""
    llm, tts = OpenAILLMService(api_key="test"), FrameProcessor(name="TTS")
    observers: list[BaseObserver] = [DebugLogObserver(), LLMLogObserver()]
    for piece in pieces:
        frame = frame_of(kind, piece)
        logger.trace(f"Pushing {frame} downstream from {llm} to {tts}")  # as pipecat does
        pushed = FramePushed(llm, tts, frame, FrameDirection.DOWNSTREAM, 0)
        for observer in observers:
            await observer.on_push_frame(pushed)


def heard(lines: list[str], log: str) -> str:
    """The text values of one log's lines, put back together."""
    return "".join(m[1] for line in lines if (m := VALUES[log].search(line)))


def digits(text: str) -> str:
    """The digits ``text`` says, written or in words."""
    return re.sub(r"\D", "", as_digits(text))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(READINGS),
    st.lists(st.integers(0, 200), max_size=40),
    st.sampled_from(KINDS),
    st.booleans(),
)
def test_a_secret_streamed_in_pieces_reaches_no_log_even_in_pieces(
    agent: Agent,
    how: str,
    cuts: list[int],
    kind: type[Frame],
    capturing: bool,
) -> None:
    gc.collect()  # the sessions of earlier examples leave the process's live calls
    session = open_session(agent)
    secrets_for(session)
    session.state.variables["card_number"] = CARD
    session.state.variables["portal_password"] = PASSWORD
    session.state.variables[SECURE_CAPTURE_VARIABLE] = capturing
    reply = f"Your card {' '.join(said(CARD, how))} is stored, and {PASSWORD} is your password."
    with captured() as logged:
        asyncio.run(log_pieces(streamed(reply, cuts), kind))
    logs = ["push", "debug", "llm"] if kind is LLMTextFrame else ["push", "debug"]
    for log in logs:
        assert any(VALUES[log].search(line) for line in logged), f"no {log} line was logged"
        text = heard(logged, log)
        assert CARD.replace(" ", "")[4:] not in digits(text), (log, logged)
        assert PASSWORD not in text.lower(), (log, logged)


def test_text_values_are_masked_only_while_a_call_holds_a_secret(agent: Agent) -> None:
    gc.collect()
    session = open_session(agent)
    secrets_for(session)
    piece = "OpenAILLMService#0 → LLM GENERATING: 'a table for 4 at' at 1.25s"
    quoted = "heard 'a table for four at 7:30' at 1.25s"
    assert [redact_everywhere(piece), redact_everywhere(quoted)] == [piece, quoted]
    session.state.variables["card_number"] = CARD
    assert redact_everywhere(piece) == piece.replace("a table for 4 at", PLACEHOLDER)
    numbers = f"a table for {PLACEHOLDER} at {PLACEHOLDER}:{PLACEHOLDER}"
    assert redact_everywhere(quoted) == f"heard '{numbers}' at 1.25s"  # times outside stay
