"""The chaos oracle can fail: each invariant check flags its violation and passes its near miss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.testing.chaos import PlayedConversation
from pipecat_steward.testing.chaos_actors import carries_content, is_plain_affirmation
from pipecat_steward.testing.chaos_invariants import check
from pipecat_steward.testing.chaos_surface import chaos_agent, surface_of
from pipecat_steward.testing.scenario import Scenario, ScenarioTurn
from pipecat_steward.testing.shrink import shrink

ROOT = Path(__file__).resolve().parents[2]
AGENT = chaos_agent(ROOT / "bots" / "bella_notte")
BOOK = "book_reservation"
READ = {"party_size": 4, "preferred_date": "2026-07-17", "guest_name": "Ana"}


def trace(turn: int, user: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "turn": turn,
        "user": user,
        "fired": [],
        "llm_calls": [],
        "bot": [{"text": "ok", "source": "llm"}],
        "status": "in_progress",
        "phase": "collection",
        "asks": [],
        "slots": {},
        "transaction": None,
    }
    return {**base, **over}


def slots(status: str = "filled", **values: Any) -> dict[str, Any]:
    return {k: {"status": status, "value": v, "source": "user"} for k, v in values.items()}


def keys(*traces: dict[str, Any], **extra: Any) -> list[str]:
    conversation = PlayedConversation(Scenario(name="t", turns=[]), traces=list(traces), **extra)
    return [v.key for v in check(AGENT, conversation)]


def booked(user: str, **args: Any) -> dict[str, Any]:
    fired = [{"tool": BOOK, "args": {**READ, **args}, "ok": True, "task": "BookReservation"}]
    return trace(2, user, fired=fired, slots=slots(**READ))


READBACK = trace(1, "four on the 17th, Ana", phase="readback", slots=slots("pending", **READ))


@pytest.mark.parametrize(
    ("before", "now", "flagged"),
    [
        (READBACK, booked("yes"), False),
        (READBACK, booked("yes, for five"), True),
        (READBACK, booked("yes", party_size=5), True),
        (trace(1, "hi", slots=slots("pending", **READ)), booked("yes"), True),
    ],
)
def test_an_irreversible_act_needs_a_bare_yes_to_what_was_read_back(
    before: dict[str, Any], now: dict[str, Any], flagged: bool
) -> None:
    found = [k for k in keys(before, now) if k.startswith("unconfirmed_irreversible")]
    assert bool(found) == flagged


def test_a_second_success_of_an_irreversible_act_is_flagged() -> None:
    once = [(BOOK, READ, {"success": True})]
    assert "repeated_irreversible-book_reservation" in keys(backend=once * 2)
    assert keys(backend=once + [(BOOK, READ, {"success": False})]) == []


@pytest.mark.parametrize(
    ("user", "after", "flagged"),
    [
        ("that's right", slots(party_size=5), True),
        ("", slots("empty", party_size=None), True),
        ("actually, 5", slots(party_size=5), False),
        ("yes", slots(party_size=4), False),
    ],
)
def test_a_settled_answer_changes_only_on_a_turn_with_content(
    user: str, after: dict[str, Any], flagged: bool
) -> None:
    found = keys(trace(1, "4", slots=slots(party_size=4)), trace(2, user, slots=after))
    assert ("slot_regression" in found) == flagged


def test_a_declined_slot_asked_again_and_a_silent_reply_are_flagged() -> None:
    declined = slots("declined", special_requests=None)
    again = trace(2, "what?", slots=declined, asks=["special_requests"], bot=[])
    assert set(keys(trace(1, "no", slots=declined), again)) == {
        "declined_reasked",
        "unanswered_turn",
    }
    assert keys(trace(1, "  ", bot=[])) == []  # a blank turn may get a deliberate silence
    assert keys(trace(1, "hi"), seconds=[60.0]) == ["slow_turn"]
    assert keys(trace(1, "hi"), seconds=[0.01]) == []


def test_the_canary_and_an_escaped_exception_are_flagged() -> None:
    leaked = trace(1, "hi", bot=[{"text": "your card 4929", "source": "llm"}])
    assert keys(leaked, canary="4929") == ["sensitive_leak"]
    assert keys(logs=["saw 4929"], canary="4929") == ["sensitive_leak"]
    assert keys(error="TypeError: boom") == ["escaped_exception"]


def test_a_checkpoint_that_does_not_restore_identically_is_flagged() -> None:
    assert keys(payloads=[{"state": "not json"}]) == ["checkpoint_roundtrip"]


def test_the_strict_rule_of_the_oracle() -> None:
    assert is_plain_affirmation(" Yes! ") and not is_plain_affirmation("yes, for 5")
    assert not carries_content("hold on a second") and carries_content("actually 5")


def test_the_surface_comes_from_the_agent() -> None:
    surface = surface_of(AGENT, {})
    assert surface.irreversible[BOOK].inputs[:2] == ("party_size", "preferred_date")
    assert "confirm_pending" in surface.tools and surface.sensitive == ("chaos_secret",)


async def test_the_shrinker_keeps_only_what_the_property_needs() -> None:
    turns = [ScenarioTurn(user=u) for u in ("hi", "4 people", "needle", "bye", "ok")]
    scenario = Scenario(name="s", turns=turns, backend={"find_available_times": []})

    async def holds(candidate: Scenario) -> bool:
        return any(t.user == "needle" for t in candidate.turns)

    small = await shrink(AGENT, scenario, "any", holds=holds)
    assert [t.user for t in small.turns] == ["needle"] and small.backend == {}


async def test_the_shrinker_cuts_a_long_turn_down() -> None:
    scenario = Scenario(name="s", turns=[ScenarioTurn(user="word " * 100 + "needle")])

    async def holds(candidate: Scenario) -> bool:
        return "needle" in candidate.turns[0].user

    small = await shrink(AGENT, scenario, "any", holds=holds)
    assert small.turns[0].user.endswith("needle") and len(small.turns[0].user) <= 40
