"""Log lines are redacted against every live call at once, and no call keeps them.

A process running many calls redacts each log line once, trying only the secrets it could
hold: the result is checked against one plain redaction holding every live session's secrets
(and, with one live call, against that call's own redaction), over random sessions, secrets,
secure captures and lines. The sessions' own memos of redacted
strings never see log lines: each line is new, and a memo of them would grow with the log.
"""

from __future__ import annotations

import gc
import re
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.integration.test_canaries import clinic_with_secrets

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.core.heard_secrets import shaped_secrets, spoken_secrets
from pipecat_steward.core.redaction import PLACEHOLDER, SECURE_PLACEHOLDER, Redactor
from pipecat_steward.pipecat import redaction
from pipecat_steward.pipecat.redaction import (
    SECURE_CAPTURE_VARIABLE,
    SessionSecrets,
    redact_everywhere,
    secrets_for,
)
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.session import StewardSession

VALUES = ["opaltiger", "4000 1234 5678 9010", "123456789", "Opal Tiger", "078-05-1120", ""]
VARIABLES = ["portal_password", "card_number", "member_ssn"]
LINES = [
    "LLMUserAggregator#0: User started speaking (strategy: TranscriptionUserTurnStartStrategy#0)",
    "Generating TTS [my word is OPALTIGER and the card 4000-1234-5678-9010]",
    "TranscriptionFrame#12(user: caller, text: [it is 078 05 1120], language: None)",
    "my password is bluefalcon9, PIN 4412 and 5500 0000 0000 0004",
    "opal\ttiger said 123-45-6789 at 2026-12-03",
    "nothing secret here #4411",
    "OpenAILLMService#0 → LLM GENERATING: ' 4412' at 1.23s",
    "heard 'call me at 12, room 77' at 2.50s",
    "",
]
FRAME_TEXT = re.compile(r"(Transcription\w*Frame\S*\(.*?text: \[)(.*?)(\])")
TEXT_VALUE = re.compile(r"(text: \[)(.*?)(\](?=\)|, \w+: ))|(['\"])(.*?)(\4)")
STREAMED = re.compile(r"\b(LLM|TTS)TextFrame\b|\bLLM GENERATING: ")


def without_text_values(text: str) -> str:
    """``text`` with its text values masked: a streamed piece whole, another's digits."""
    streamed = bool(STREAMED.search(text))

    def mask(value: str) -> str:
        return PLACEHOLDER if streamed else re.sub(r"\d+", PLACEHOLDER, value)

    def masked(m: re.Match[str]) -> str:
        if m[1] is not None:
            return m[1] + mask(m[2]) + m[3]
        return m[4] + mask(m[5]) + m[6]

    return TEXT_VALUE.sub(masked, text)


DIGIT_RUN = re.compile(r"\d(?:[\s.\-/]*\d){3,}")


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Agent:
    return load_agent(clinic_with_secrets(tmp_path_factory.mktemp("logs") / "clinic"))


def one_session_at_a_time(text: str) -> str:
    """A log line redacted by each live session in turn, as its own texts are."""
    for book in list(redaction._BOOK.values()):  # pyright: ignore[reportPrivateUsage]
        text = book.redact(text)
        if book.capturing or book.now()[0].secrets:
            text = without_text_values(text)
        if book.capturing:
            text = FRAME_TEXT.sub(rf"\g<1>{SECURE_PLACEHOLDER}\g<3>", text)
            text = DIGIT_RUN.sub(PLACEHOLDER, text)
    return text


change = st.one_of(
    st.tuples(
        st.just("set"), st.integers(0, 3), st.sampled_from(VARIABLES), st.sampled_from(VALUES)
    ),
    st.tuples(st.just("capture"), st.integers(0, 3), st.booleans(), st.just("")),
    st.tuples(st.just("hear"), st.integers(0, 3), st.sampled_from(LINES), st.just("")),
    st.tuples(st.just("log"), st.just(0), st.sampled_from(LINES), st.just("")),
)


def _apply(sessions: list[StewardSession], op: str, who: int, a: object, b: str) -> None:
    session = sessions[who % len(sessions)]
    if op == "set":
        if b:
            session.state.variables[str(a)] = b
        else:
            session.state.variables.pop(str(a), None)
    elif op == "capture":
        session.state.variables[SECURE_CAPTURE_VARIABLE] = bool(a)
    elif op == "hear":
        secrets_for(session).hear(str(a))


def as_one_redaction(text: str) -> str:
    """A log line redacted by one redaction holding every live session's secrets."""
    parts = [book.now() for book in list(redaction._BOOK.values())]  # pyright: ignore[reportPrivateUsage]
    digits = min((d for _, d, _ in parts if d is not None), default=None)
    known = frozenset[str]().union(*(r.secrets for r, _, _ in parts))
    unknown = spoken_secrets(text) | shaped_secrets(text, digits)
    text = Redactor.of(known | unknown).redact(text)
    if known or any(capturing for _, _, capturing in parts):
        text = without_text_values(text)
    if any(capturing for _, _, capturing in parts):
        text = FRAME_TEXT.sub(rf"\g<1>{SECURE_PLACEHOLDER}\g<3>", text)
        text = DIGIT_RUN.sub(PLACEHOLDER, text)
    return text


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 4), st.lists(change, max_size=20))
def test_a_log_line_is_redacted_as_one_redaction_holding_every_live_sessions_secrets(
    agent: Agent, count: int, changes: list[tuple[str, int, object, str]]
) -> None:
    """What a session's own redaction does, over the secrets of every live call at once.

    With one live call that is exactly its own redaction. With several, nothing any of them
    would redact is left; where their secrets overlap (one call's captured sentence holds a
    number another call masks by its shape) the longest secret goes first, as within one
    call, so the line loses more than redacting with each call in turn would take, never less.
    """
    gc.collect()  # the sessions of earlier examples leave the process's live calls
    sessions = [open_session(agent) for _ in range(count)]
    for session in sessions:
        secrets_for(session)
    books = list(redaction._BOOK.values())  # pyright: ignore[reportPrivateUsage]
    for op, who, a, b in changes:
        _apply(sessions, op, who, a, b)
        for line in LINES if op == "log" else LINES[:2]:
            clean = redact_everywhere(line)
            assert clean == as_one_redaction(line)
            assert all(book.redact(clean) == clean for book in books)
            if len(books) == 1:
                assert clean == one_session_at_a_time(line)


def test_log_lines_leave_nothing_behind_in_the_sessions(agent: Agent) -> None:
    sessions = [open_session(agent) for _ in range(20)]
    for i, session in enumerate(sessions):
        session.state.variables["member_ssn"] = f"078-05-{1000 + i}"
        secrets_for(session).redact("warm up")
    lines = [f"{LINES[0]} frame {i}" for i in range(2000)]
    redact_everywhere(lines[0])
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for line in lines:
            assert redact_everywhere(line) == line
        gc.collect()
        grown = tracemalloc.take_snapshot().compare_to(before, "lineno")
    finally:
        tracemalloc.stop()
    retained = sum(stat.size_diff for stat in grown)
    # Remembering the lines would keep ~2000 × 20 strings (several MB).
    assert retained < 200_000, retained
    assert all(isinstance(secrets_for(s), SessionSecrets) for s in sessions)
