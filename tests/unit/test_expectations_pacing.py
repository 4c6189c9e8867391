"""A turn's ``pipecat eval`` expectations must hold the next turn until the bot's last words.

``pipecat eval`` sends a turn once the turn before it met its expectations. A bare reply
expectation is met by the turn's first response, and the LLM's tool-call response (empty) is
one, so without a check the next turn races the bot's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pipecat_steward.testing.expectations import check_pacing, check_turns

READBACK = "Just to confirm — 4 guests. Is that correct?"


def trace(*said: str, calls: int = 0, turn: int = 1) -> dict[str, Any]:
    """A turn's trace: what the bot said, and how many tool calls the LLM made first."""
    return {
        "turn": turn,
        "user": "hi",
        "bot": [{"text": s, "source": "llm"} for s in said],
        "llm_calls": [{"name": "set_x", "args": {}, "outcome": "ok"}] * calls,
    }


PACED: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    ("bare reply, one response", trace("Hello."), [{"event": "response"}]),
    ("llm_response alike", trace("Hello."), [{"event": "llm_response"}]),
    (
        "words of the last reply after a call",
        trace(READBACK, calls=1),
        [{"event": "response", "text_contains": "Just to confirm"}],
    ),
    (
        "words only the last of two utterances says",
        trace("Got it.", READBACK),
        [{"event": "tts_response", "text_contains": "Is that  correct?"}],
    ),
    ("a judge can wait", trace("Got it.", READBACK, calls=1), [{"event": "response", "eval": "x"}]),
    ("the bot said nothing", trace(), []),
    (
        "a call expectation beside a paced reply",
        trace(READBACK, calls=1),
        [{"event": "function_call", "name": "set_x"}, {"event": "response", "text_contains": "4"}],
    ),
]

RACY: list[tuple[str, dict[str, Any], list[dict[str, Any]]]] = [
    ("no expectation", trace("Hello."), []),
    ("bare reply after a tool call", trace(READBACK, calls=1), [{"event": "response"}]),
    ("bare reply, two utterances", trace("Got it.", READBACK), [{"event": "response"}]),
    (
        "only an exclusion",
        trace(READBACK, calls=1),
        [{"event": "response", "text_excludes": "sorry"}],
    ),
    (
        "words an earlier utterance already said",
        trace("Four guests.", "Four guests, is that correct?"),
        [{"event": "response", "text_contains": "Four guests"}],
    ),
    ("a call alone", trace(READBACK, calls=1), [{"event": "function_call", "name": "set_x"}]),
    (
        "an absent reply",
        trace("Hello."),
        [{"event": "response", "absent": True, "text_contains": "Hello"}],
    ),
    ("words the bot never said", trace("Hello."), [{"event": "response", "text_contains": "Bye"}]),
]


@pytest.mark.parametrize(("case", "turn", "events"), PACED, ids=[c[0] for c in PACED])
def test_expectations_that_wait_for_the_last_words(
    case: str, turn: dict[str, Any], events: list[dict[str, Any]]
) -> None:
    assert check_pacing(turn, events) == []


@pytest.mark.parametrize(("case", "turn", "events"), RACY, ids=[c[0] for c in RACY])
def test_expectations_met_before_the_bot_is_done(
    case: str, turn: dict[str, Any], events: list[dict[str, Any]]
) -> None:
    (problem,) = check_pacing(turn, events)
    assert problem.startswith("pacing:")
    assert repr(turn["bot"][-1]["text"]) in problem


@dataclass
class Turn:
    """A scenario turn as ``check_turns`` reads it."""

    events: list[dict[str, Any]] = field(default_factory=lambda: [])
    checks: dict[str, Any] = field(default_factory=lambda: {})
    send_after: Any = None


def test_only_turns_that_hold_a_sent_turn_are_paced() -> None:
    traces = [trace(READBACK, calls=1, turn=n) for n in (1, 2, 3)]
    turns = [Turn(), Turn(send_after={"event": "llm_started"}), Turn()]
    problems = check_turns(traces, turns)
    # Turn 2 waits for an event of its own choosing (it talks over the bot on purpose), so
    # turn 1 does not pace it; turn 3 is the last.
    assert list(problems) == [2]
    assert problems[2][0].startswith("pacing:")


def test_check_turns_reports_every_check_of_a_turn() -> None:
    turns = [Turn([{"event": "response", "text_contains": "Bye"}], {"bot": ["Bye"]}), Turn()]
    problems = check_turns([trace("Hello.", turn=1), trace("Hi.", turn=2)], turns)
    assert len(problems[1]) == 3  # the bot check, the reply's words, the pacing
