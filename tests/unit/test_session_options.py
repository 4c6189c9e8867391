"""A steward or session refuses an option it cannot take when it is made, on every host,
naming every bad one in one error.

``Steward(agent, task_timeout_s="5")`` or ``on_handover=3`` were taken and failed mid-call;
``state={}`` was quietly replaced by a fresh state and ``client_messages="no"`` or
``supervise="no"`` read as yes.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.core.state import SessionState
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.engine import open_session

BOTS = Path(__file__).resolve().parents[2] / "bots"

# Each option with values it cannot take.
REFUSED: dict[str, list[Any]] = {
    "state": [{}, {"slots": {}}, "state"],
    "rng": [0, "random"],
    "event_data": [[1, 2], "caller=+1555"],
    "channel": [5, b"phone"],
    "judge": [True, "llm"],
    "gate_timeout_s": [0, -1, "5", float("nan"), float("inf"), True],
    "task_timeout_s": [0, -0.5, "5", float("nan"), False],
    "checkpointer": [object(), "redis://localhost"],
    "on_handover": [3, "hand over"],
    "client_messages": ["no", 0, 1, None],
    "clock": ["2026-12-01"],
    "call_id": [7, b"call-7"],
}


def _publisher(*, used: bool = False, closed: bool = False) -> EventPublisher:
    """A publisher another call has used (its call_started emitted), or one that is closed."""
    publisher = EventPublisher("another-call")
    if used:
        publisher.start("bella_notte")
    if closed:
        asyncio.run(publisher.aclose())
    return publisher


# The steward's own options (Steward and StewardS2S), with values they cannot take. A publisher
# records one call: shared by two stewards, each sent the other's events to its own client.
STEWARD_REFUSED: dict[str, list[Any]] = {
    "supervise": ["no", None, 1],
    "events": [object(), "sqlite:calls.db", _publisher(used=True), _publisher(closed=True)],
    "extra_tools": ["abc", [1], [None], (t for t in ())],
}

# One value each option takes, besides its default.
TAKEN: dict[str, Any] = {
    "state": SessionState(),
    "rng": random.Random(3),
    "event_data": {},
    "channel": "phone",
    "judge": lambda _: None,
    "gate_timeout_s": 0.05,
    "task_timeout_s": 2,
    "on_handover": lambda _: None,
    "client_messages": False,
    "clock": lambda: "2026-12-01",
    "call_id": "call-7",
}

HOSTS: dict[str, Callable[..., object]] = {
    "Steward": Steward,
    "StewardS2S": StewardS2S,
    "open_session": open_session,
}


@pytest.fixture(scope="module", params=["bella_notte", "order_desk"])
def agent(request: pytest.FixtureRequest) -> Agent:
    return load_agent(BOTS / request.param)  # a slot engine and a transaction engine


CASES = [(name, value) for name, values in REFUSED.items() for value in values]


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize(("option", "value"), CASES, ids=[f"{n}={v!r}" for n, v in CASES])
def test_an_option_a_session_cannot_take_is_refused_when_it_is_made(
    host: str, option: str, value: Any, agent: Agent
) -> None:
    with pytest.raises(ConfigError, match=rf"^options: {option}: takes .*, not "):
        HOSTS[host](agent, **{option: value})


STEWARD_CASES = [(name, value) for name, values in STEWARD_REFUSED.items() for value in values]


@pytest.mark.parametrize("host", ["Steward", "StewardS2S"])
@pytest.mark.parametrize(
    ("option", "value"), STEWARD_CASES, ids=[f"{n}={v!r}" for n, v in STEWARD_CASES]
)
def test_an_option_a_steward_cannot_take_is_refused_when_it_is_made(
    host: str, option: str, value: Any, agent: Agent
) -> None:
    with pytest.raises(ConfigError, match=rf"^options: {option}: takes .*, not "):
        HOSTS[host](agent, **{option: value})


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_an_unknown_option_is_named_with_the_options_there_are(host: str, agent: Agent) -> None:
    with pytest.raises(
        ConfigError, match=r"^options: task_timeout: no such option; .*task_timeout_s"
    ):
        HOSTS[host](agent, task_timeout=5)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_every_option_a_session_takes_is_taken(host: str, agent: Agent) -> None:
    HOSTS[host](agent, **TAKEN)


def test_every_refused_option_is_named_in_one_error(agent: Agent) -> None:
    bad = {name: values[0] for name, values in {**REFUSED, **STEWARD_REFUSED}.items()}
    with pytest.raises(ConfigError) as raised:
        Steward(agent, **bad)
    named = sorted(part.split(":")[0] for part in raised.value.problem.split("; "))
    assert named == sorted(bad)


@pytest.mark.parametrize("host", ["Steward", "StewardS2S"])
def test_a_new_publisher_is_taken_and_a_second_steward_cannot_share_it(
    host: str, agent: Agent
) -> None:
    publisher = EventPublisher("one-call")
    HOSTS[host](agent, events=publisher)
    with pytest.raises(ConfigError, match=r"events: takes a new EventPublisher.*1 emitted"):
        HOSTS[host](agent, events=publisher)
