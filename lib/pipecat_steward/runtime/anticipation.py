"""Anticipated engine steps: the step for a caller's words, run while the caller's turn ends.

A final transcript usually reaches the pipeline before the turn ends (the turn strategy waits
to hear whether the caller goes on), and an STT service's interim transcripts guess the words
earlier still, while the caller speaks. The inference that follows needs the engine's step
for those words. ``StepAnticipation`` runs that step when the words are heard, so the wait
hides it. The step is a pure function of its inputs, so an anticipated result is used only
when every input is unchanged at the inference: the same words, first-turn flag, channel,
state, event data and, when the step chose at random, the chooser's state. Any difference is
a miss and the step runs as it always does; an anticipation never changes the session.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from loguru import logger

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.sameness import same_value
from pipecat_steward.core.slots import Chooser, EngineStep, step
from pipecat_steward.core.state import SessionState

__all__ = [
    "AnticipationStats",
    "StepAnticipation",
    "StepInputs",
    "StepSource",
    "scratch_chooser",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StepInputs:
    """Everything a caller turn's first step reads, as it was when the step ran.

    Attributes:
        words: The caller's words (stripped), also the step's ``caller_words``.
        first_turn: No assistant reply existed yet.
        channel: The delivery channel.
        state: A copy of the session state. The state is a value: the runtime replaces it or
            assigns its fields, and a copy's containers are its own, so any such change since
            makes the two unequal.
        event_data: A deep copy of the session's event data.
    """

    words: str
    first_turn: bool
    channel: str | None
    state: SessionState
    event_data: dict[str, Any]


@dataclass(slots=True)
class AnticipationStats:
    """How anticipations fared.

    Attributes:
        made: Steps anticipated.
        hits: Inferences that used an anticipated step.
        misses: Inferences that found one whose inputs had changed (the step ran again).
    """

    made: int = 0
    hits: int = 0
    misses: int = 0


class _CannotCopy(Exception):
    """The step chose at random and the session's chooser cannot be copied."""


class _ChooserCopy:
    """The chooser an anticipated step gets: a copy of the session's, made on first use.

    Most steps choose nothing, and then the session's chooser is neither read nor compared.
    """

    def __init__(self, chooser: Chooser) -> None:
        self.chooser = chooser
        self.before: tuple[Any, ...] | None = None  # the session's chooser state when copied
        # Made on first use too: seeding a generator reads the OS's entropy, on every turn.
        self._twin: random.Random | None = None

    def choice(self, seq: list[T], /) -> T:
        if self._twin is None:
            if type(self.chooser) is not random.Random:  # a SystemRandom has no state
                raise _CannotCopy
            self.before = self.chooser.getstate()
            self._twin = random.Random()
            self._twin.setstate(self.before)
        return self._twin.choice(seq)

    def starts_from(self, chooser: Chooser) -> bool:
        """Whether ``chooser`` is where the copy started from (or the copy was never used)."""
        if self._twin is None:
            return True
        return type(chooser) is random.Random and chooser.getstate() == self.before

    def catch_up(self, chooser: Chooser) -> bool:
        """Move ``chooser`` on as the copy moved, if it is where the copy started from."""
        if not self.starts_from(chooser):
            return False
        if self._twin is not None and isinstance(chooser, random.Random):  # as starts_from found
            chooser.setstate(self._twin.getstate())
        return True


def scratch_chooser(chooser: Chooser) -> Chooser:
    """A copy of ``chooser`` that a step meant to change nothing may move.

    A chooser without state (``random.SystemRandom``) is its own copy; another kind is
    deep-copied.
    """
    if type(chooser) is random.SystemRandom:
        return chooser
    if type(chooser) is random.Random:
        twin = random.Random()
        twin.setstate(chooser.getstate())
        return twin
    return copy.deepcopy(chooser)


class StepSource(Protocol):
    """What a step reads from a session besides the words and the first-turn flag."""

    agent: Agent
    state: SessionState
    rng: Chooser
    event_data: dict[str, Any]
    channel: str | None


def _same(inputs: StepInputs, source: StepSource, words: str, first_turn: bool) -> bool:
    """Whether a step made from ``inputs`` is the step ``source`` would make for ``words``."""
    return (
        inputs.words == words
        and inputs.first_turn == first_turn
        and inputs.channel == source.channel
        and inputs.state == source.state
        and same_value(inputs.event_data, source.event_data)
        and same_value(inputs.state.variables, source.state.variables)
        and same_value(_slot_values(inputs.state), _slot_values(source.state))
    )


def _slot_values(state: SessionState) -> dict[str, object]:
    """Each slot's value: ``==`` on the state would take a ``0`` for a ``False`` there."""
    return {name: record.value for name, record in state.slots.items()}


class StepAnticipation:
    """At most one anticipated step of one session (see the module docstring)."""

    def __init__(self) -> None:
        self.stats = AnticipationStats()
        self._held: tuple[StepInputs, EngineStep, _ChooserCopy] | None = None

    def make(self, source: StepSource, words: str, *, first_turn: bool) -> EngineStep | None:
        """Run the step for ``words`` and keep it with its inputs (it replaces any held one).

        A held step whose inputs are these already is kept and returned, not run again: the
        words of an interim transcript, then the same words as the final one.

        Returns the step made, or None when none could be (blank words, a chooser that cannot
        be copied, an error the inference will meet again).
        """
        words = words.strip()
        held, self._held = self._held, None
        if (
            held is not None
            and _same(held[0], source, words, first_turn)
            and held[2].starts_from(source.rng)
        ):
            self._held = held
            return held[1]
        return self._run(source, words, first_turn) if words else None

    def _run(self, source: StepSource, words: str, first_turn: bool) -> EngineStep | None:
        data = copy.deepcopy(source.event_data) if source.event_data else {}
        inputs = StepInputs(words, first_turn, source.channel, source.state.copy(), data)
        copied = _ChooserCopy(source.rng)
        try:
            result = step(
                source.agent.flow,
                source.state,
                words,
                rng=copied,
                event_data=source.event_data,
                channel=source.channel,
                first_turn=first_turn,
                caller_words=words,
            )
        except _CannotCopy:
            return None
        except Exception:
            # The turn's inference runs the step again and meets the error where it is handled.
            logger.opt(exception=True).debug("steward: a step could not be anticipated")
            return None
        self._held = (inputs, result, copied)
        self.stats.made += 1
        return result

    def take(self, source: StepSource, words: str, *, first_turn: bool) -> EngineStep | None:
        """The anticipated step when its inputs are these, else None; either way it is used up.

        On a hit a chooser the step chose from is moved on as the step moved its copy.
        """
        held, self._held = self._held, None
        if held is None:
            return None
        inputs, result, copied = held
        if not (_same(inputs, source, words, first_turn) and copied.catch_up(source.rng)):
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return result
