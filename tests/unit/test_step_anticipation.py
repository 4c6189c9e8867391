"""An anticipated engine step never changes a decision.

A session that anticipates the step for a caller's words (``StewardSession.anticipate``), or
runs a speculative decision for them first (an eager end of turn), must decide exactly as one
that does not: the same actions, states and chooser state, turn after
turn, whether the anticipation was for the words that came, for other words, or went stale
because a tool call changed the state in between. Anticipating changes nothing by itself.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.session import StewardSession

BOTS = Path(__file__).resolve().parents[2] / "bots"
WORDS = [
    "yes",
    "yeah that's right",
    "no, actually make it 6",
    "I'd rather not say",
    "what times do you have?",
    "4 people on July 17th",
    "seven thirty please",
    "my name is Maria Rossi",
    "maria@example.com",
    "about 50 people, we use spreadsheets",
    "not sure yet",
    "hmm",
]
VALUES: list[Any] = [4, "4", "2026-07-17", "19:30", "Maria", "maria@example.com", "50", "soon", ""]
AGENTS: dict[str, Agent] = {}


def agent(bot: str) -> Agent:
    if bot not in AGENTS:
        AGENTS[bot] = load_agent(BOTS / bot)
    return AGENTS[bot]


Move = tuple[str, int, int]  # (kind, words or tool index, value index)
moves = st.lists(
    st.tuples(
        st.sampled_from(
            ["plain", "same", "other", "stale", "tool", "guessed", "again", "eager", "withdrawn"]
        ),
        st.integers(0, 50),
        st.integers(0, 50),
    ),
    min_size=1,
    max_size=14,
)


def tool_call(session: StewardSession, pick: int, value: int) -> None:
    """The model calls one of the tools visible now (a refused call when none is)."""
    setters = session.agent.flow.setters
    visible = sorted(
        t
        for t in (session.last_action.visible_tools if session.last_action else ())
        if t in setters
    )
    name = visible[pick % len(visible)] if visible else sorted(setters)[pick % len(setters)]
    args = {
        param or slot: VALUES[(value + i) % len(VALUES)]
        for i, (param, slot) in enumerate(setters[name])
    }
    session.tool_call(name, args)


def snapshot(session: StewardSession) -> tuple[Any, ...]:
    assert isinstance(session.rng, random.Random)
    return (session.state, session.last_action, session.rng.getstate(), session.heard)


def play(session: StewardSession, script: list[Move], anticipating: bool) -> list[tuple[Any, ...]]:
    seen = [snapshot(session)]
    for kind, a, b in script:
        if kind == "tool":
            tool_call(session, a, b)
            seen.append(snapshot(session))
            continue
        words = WORDS[a % len(WORDS)]
        if anticipating and kind in ("same", "stale"):
            session.anticipate(words, first_turn=False)
        if anticipating and kind in ("other", "guessed"):
            session.anticipate(WORDS[(a + 1) % len(WORDS)], first_turn=False)
        if anticipating and kind in ("guessed", "again"):  # an interim's words, then the final's
            session.anticipate(words, first_turn=False)
            session.anticipate(words, first_turn=False)
        if kind == "again":  # the state moved between the guess and the final
            tool_call(session, a, b)
            if anticipating:
                session.anticipate(words, first_turn=False)
        if anticipating and kind == "eager":  # a speculative inference on the same words
            session.decide(words, speculative=True)
        if anticipating and kind == "withdrawn":  # the committed words differ from the eager
            session.decide(WORDS[(a + 1) % len(WORDS)], speculative=True)
        if kind == "stale":
            tool_call(session, a, b)
        session.decide(words)
        seen.append(snapshot(session))
    return seen


@pytest.mark.parametrize("bot", ["bella_notte", "lead_capture"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=moves, seed=st.integers(0, 3))
def test_an_anticipating_session_decides_as_one_that_does_not(
    bot: str, script: list[Move], seed: int
) -> None:
    sessions = [open_session(agent(bot), rng=random.Random(seed)) for _ in range(2)]
    for session in sessions:
        session.decide("", first_turn=True)
    plain, anticipating = (play(s, script, anticipating=i == 1) for i, s in enumerate(sessions))
    assert anticipating == plain
    stats = sessions[1].anticipation.stats
    assert stats.hits + stats.misses <= stats.made


@pytest.mark.parametrize("bot", ["bella_notte", "lead_capture"])
def test_anticipating_changes_nothing_and_the_words_that_came_hit(bot: str) -> None:
    session = open_session(agent(bot))
    session.decide("", first_turn=True)
    before = (snapshot(session), len(session.turns), session.caller_turns.current)
    session.anticipate("4 people on July 17th", first_turn=False)
    assert (snapshot(session), len(session.turns), session.caller_turns.current) == before
    session.decide("4 people on July 17th")
    assert (session.anticipation.stats.made, session.anticipation.stats.hits) == (1, 1)


@pytest.mark.parametrize(
    ("change", "hit"),
    [
        (lambda s: None, True),
        (lambda s: setattr(s, "channel", "WEB"), False),
        (lambda s: s.event_data.update(caller_id="+15550100"), False),
        (lambda s: setattr(s.state, "steer_back_turns", s.state.steer_back_turns + 1), False),
        (lambda s: s.state.pending_payloads.append({"type": "card"}), False),
        (lambda s: s.rng.random(), True),  # the step chose nothing: the chooser is not read
    ],
)
def test_any_changed_input_is_a_miss(change: Any, hit: bool) -> None:
    session = open_session(agent("bella_notte"))
    session.decide("", first_turn=True)
    twin = open_session(agent("bella_notte"))
    twin.decide("", first_turn=True)
    session.anticipate("4 people on July 17th", first_turn=False)
    for s in (session, twin):
        change(s)
    assert session.decide("4 people on July 17th") == twin.decide("4 people on July 17th")
    assert session.state == twin.state
    assert session.anticipation.stats.hits == int(hit)
    assert session.anticipation.stats.misses == int(not hit)


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("advance", [False, True])
def test_a_step_that_chose_at_random_is_used_or_kept_only_from_the_same_chooser_state(
    advance: bool, again: bool
) -> None:
    """After a confirmed readback the next question opens with a prefix picked at random.

    Anticipated ``again`` (an interim's words, then the final's), the step is kept only while
    the chooser has not moved since; otherwise it is made afresh, and the inference hits.
    """
    session, twin = (open_session(agent("bella_notte"), rng=random.Random(7)) for _ in range(2))
    for s in (session, twin):
        s.decide("", first_turn=True)
        s.state.readback_transition = True
    session.anticipate("hmm", first_turn=False)
    for s in (session, twin):
        if advance:
            s.rng.random()
    if again:
        session.anticipate("hmm", first_turn=False)
    assert session.decide("hmm") == twin.decide("hmm")
    assert snapshot(session) == snapshot(twin)
    stats = session.anticipation.stats
    assert (stats.made, stats.hits) == (1 + (again and advance), int(again or not advance))


def test_an_uncopyable_chooser_is_never_a_wrong_hit() -> None:
    bot = agent("bella_notte")
    session = open_session(bot, rng=random.SystemRandom())
    session.decide("", first_turn=True)
    session.state.readback_transition = True  # the step will choose a prefix at random
    session.anticipate("hmm", first_turn=False)
    assert session.anticipation.stats.made == 0
    session.decide("hmm")
    assert session.anticipation.stats.hits == 0


CHANGES = [
    (lambda s: None, 1),
    (lambda s: setattr(s, "channel", "WEB"), 2),
    (lambda s: s.event_data.update(caller_id="+15550100"), 2),
    (lambda s: setattr(s.state, "steer_back_turns", s.state.steer_back_turns + 1), 2),
    (lambda s: s.rng.random(), 1),  # the step chose nothing: the chooser is not read
]


@pytest.mark.parametrize(("change", "made"), CHANGES)
def test_the_same_words_anticipated_again_keep_the_step_unless_an_input_changed(
    change: Any, made: int
) -> None:
    """An interim guess, then the final transcript with the same words: one step, unless what
    the step reads changed in between; either way the inference hits."""
    session, twin = (open_session(agent("bella_notte")) for _ in range(2))
    for s in (session, twin):
        s.decide("", first_turn=True)
    first = session.anticipate("4 people on July 17th", first_turn=False)
    for s in (session, twin):
        change(s)
    again = session.anticipate("4 people on July 17th", first_turn=False)
    assert (again is first) == (made == 1)
    assert session.decide("4 people on July 17th") == twin.decide("4 people on July 17th")
    assert session.state == twin.state
    stats = session.anticipation.stats
    assert (stats.made, stats.hits, stats.misses) == (made, 1, 0)


@pytest.mark.parametrize("seed", range(8))
def test_a_speculative_decision_moves_no_chooser_and_its_step_is_the_committed_ones(
    seed: int,
) -> None:
    """An eager end of turn runs a speculative inference; the committed one follows with the same
    words. The speculation must not move the session's chooser (the step after a confirmed
    readback picks its opening at random), and its step is the one the committed inference uses."""
    session, twin = (open_session(agent("bella_notte"), rng=random.Random(seed)) for _ in range(2))
    for s in (session, twin):
        s.decide("", first_turn=True)
        s.state.readback_transition = True
    speculated = session.decide("hmm", speculative=True)
    assert snapshot(session)[2] == snapshot(twin)[2]  # the chooser did not move
    assert session.decide("hmm") == twin.decide("hmm") == speculated
    assert snapshot(session) == snapshot(twin)
    stats = session.anticipation.stats
    assert (stats.made, stats.hits) == (1, 1)
