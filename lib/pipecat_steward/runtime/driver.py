"""The engine's run loop for one inference, free of any host framework and of any I/O.

``Driver.inference`` runs the session's decision and returns an ``InferenceOutcome``: the text
the engine preempted with (to say first, verbatim), the final action (its tools and instruction
suffix are what the LLM runs with, when it runs), the calls the engine ran (to write into the
conversation history as tool-call/tool-result pairs) and the client messages to send. The host
carries the outcome out in its own framework, then calls ``Driver.complete`` once the LLM's
response has ended: the final action's client messages, the hand-overs, the end of the call, and
the question code asks itself when a firm steer-back inference made no progress.

The calls the engine asks for (executors, the auto-confirm, exit calls) run shielded from
cancellation, so a barge-in never loses a result or leaves half a tool exchange; calls that were
in flight during a barge-in finish before the next decision (no executor fires twice), and their
exchanges come with the next outcome. The Pipecat hook, the speech-to-speech adapter and the
scripted host (``pipecat_steward.runtime.conversation.ScriptedHost``) are its hosts.

A host's loop, in short::

    outcome = await driver.inference(user_text, first_turn=first, speculative=False)
    send(outcome.messages); record(outcome.exchanges); say(outcome.say)
    if outcome.llm:
        run the LLM with outcome.action.visible_tools and outcome.action.suffix
    after = await driver.complete(outcome)
    send(after.messages); say(after.say); end the call if after.end
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pipecat_steward.core.slots import Action, ToolCall
from pipecat_steward.runtime.records import RecordedCall
from pipecat_steward.runtime.session import StewardSession

__all__ = ["Completion", "Driver", "ToolExchange", "InferenceOutcome", "client_messages"]

_MAX_CASCADE = 20


@dataclass(frozen=True, slots=True)
class ToolExchange:
    """A call the engine ran and its result: one tool-call/tool-result pair for the history."""

    call: ToolCall
    done: RecordedCall


@dataclass(slots=True)
class InferenceOutcome:
    """What one inference request comes to.

    Attributes:
        action: The engine's last action; the LLM runs with its tools and suffix.
        say: Text the engine preempted with: say it verbatim first ("" when none). The driver
            has already recorded it as a ``preempt`` utterance.
        llm: Whether the LLM runs now (False when the engine spoke and the turn waits).
        exchanges: Calls the engine ran, to record in the history in order.
        messages: Client messages (checklist status, rich response parts) to send first.
        speculative: The request was speculative (no state change, nothing to complete).
    """

    action: Action
    say: str = ""
    llm: bool = True
    exchanges: list[ToolExchange] = field(default_factory=lambda: [])
    messages: list[dict[str, Any]] = field(default_factory=lambda: [])
    speculative: bool = False


@dataclass(frozen=True, slots=True)
class Completion:
    """What follows the LLM's response to an inference.

    Attributes:
        messages: Client messages for the final action (its response parts, checklist status).
        say: A question code asks itself, verbatim, after the LLM's words ("" when none): the
            firm steer-back directive was ignored (the inference made no progress).
        end: End the call once everything said so far has been spoken (``end_session``).
    """

    messages: tuple[dict[str, Any], ...] = ()
    say: str = ""
    end: bool = False


class Driver:
    """Runs one session's inferences; share one driver between hosts of the same session.

    Attributes:
        session: The session it drives.
        inflight: Engine calls still running (a barge-in cancelled the request that started them).
        preempted: Texts spoken by preemption that the host's relay has not reported yet.
        unheard: Follow-up questions to record once the host hears them (see ``heard``).
        record_preempts: Record preempted text as said when the outcome is made (the host emits
            it verbatim). A host whose model says it on the provider's side records it when heard.
    """

    def __init__(self, session: StewardSession, *, record_preempts: bool = True) -> None:
        self.session = session
        self.record_preempts = record_preempts
        self.inflight: set[asyncio.Future[bool]] = set()
        self.preempted: list[str] = []
        self._exchanges: list[ToolExchange] = []
        self.unheard: list[str] = []
        self._first_turn = True  # the last inference's flag: what an anticipation assumes

    def anticipate(self, words: str) -> Action | None:
        """Run the engine's step for a caller's final words before their inference asks for it.

        The step's first-turn flag is the last inference's, and off once the bot has spoken;
        a wrong guess only costs the step run here. Nothing is anticipated while calls started
        earlier are still running: their results change the state first. Returns the
        anticipated action (None when nothing was anticipated).
        """
        if self.inflight:
            return None
        first = self._first_turn and not self.session.bot_said
        return self.session.anticipate(words, first_turn=first)

    async def inference(
        self, user_text: str, *, first_turn: bool, speculative: bool = False
    ) -> InferenceOutcome:
        """Decide for one inference request; run the calls the engine asks for, cascading."""
        await self.settle()
        if not speculative:
            self._first_turn = first_turn
        spoken: list[str] = []
        messages: list[dict[str, Any]] = []
        for _ in range(_MAX_CASCADE):
            action = self.session.decide(user_text, first_turn=first_turn, speculative=speculative)
            user_text = ""
            if speculative or not (action.preempt or action.calls):
                return self._outcome(action, spoken, messages, llm=True, speculative=speculative)
            messages += client_messages(self.session, action, events=False)
            carried = asyncio.ensure_future(self._carry_out(action, spoken))
            self.inflight.add(carried)
            carried.add_done_callback(self.inflight.discard)
            if not await asyncio.shield(carried):
                break
        # No inference follows the engine's words: the events so far leave with its messages.
        messages += self.session.take_status()
        return self._outcome(action, spoken, messages, llm=False)  # pyright: ignore[reportPossiblyUnboundVariable]

    async def complete(
        self,
        outcome: InferenceOutcome,
        *,
        acted: bool = False,
        said: str = "",
        record_when_heard: bool = False,
        chained: bool = False,
    ) -> Completion:
        """After the LLM's response: deliver, hand over, end; ask the question a stall left open.

        Args:
            outcome: The inference's outcome.
            acted: The LLM called a tool in its response (the next inference sees the result).
                When it did not, and the engine had handed it a firm steer-back directive, code
                asks the open question itself right after the LLM's words.
            said: What the LLM said in its response (no question is asked twice).
            record_when_heard: The LLM's words are recorded when the host hears them (a relay
                reports them later): the question is recorded then too (``heard``), after them.
            chained: The host saw the LLM call a tool, so another inference of this turn
                follows: the events recorded so far wait for its messages (one flush of events
                per turn, not one per hop), unless the call is ending.
        """
        if outcome.speculative:
            return Completion()
        session = self.session
        events = not chained or session.ending
        messages = client_messages(session, outcome.action, events=events) if outcome.llm else []
        follow_up = "" if acted else self.follow_up(outcome, said, record=not record_when_heard)
        await session.run_exits()
        end = session.ending and not session.ended
        session.ended = session.ended or end
        if end:  # nothing follows: what the exits queued and any held events leave now
            messages += session.take_status()
        return Completion(tuple(messages), follow_up, end)

    async def settle(self) -> None:
        """Let calls started before a barge-in finish before the next decision."""
        if self.inflight:
            await asyncio.gather(*self.inflight, return_exceptions=True)

    def take_exchanges(self) -> list[ToolExchange]:
        """Exchanges not handed to a host yet (a barge-in cancelled their request)."""
        out, self._exchanges = self._exchanges, []
        return out

    def _outcome(
        self,
        action: Action,
        spoken: list[str],
        messages: list[dict[str, Any]],
        *,
        llm: bool,
        speculative: bool = False,
    ) -> InferenceOutcome:
        say = " ".join(spoken)
        if say and self.record_preempts:
            self.preempted.append(say)
            self.session.spoke(say, "preempt")
        exchanges = self.take_exchanges()
        return InferenceOutcome(action, say, llm, exchanges, messages, speculative)

    def follow_up(self, outcome: InferenceOutcome, said: str = "", *, record: bool = True) -> str:
        """The question code asks after an LLM response that made no tool call ("" when none).

        Only when the engine handed the LLM a firm steer-back directive: the caller's words
        could have held the answer, so the LLM ran first; it only talked, so code asks the open
        question itself, right after the LLM's words, unless they already hold it. Recorded as
        said (a ``preempt``).
        """
        if not outcome.llm or outcome.speculative or self.session.conflict is not None:
            return ""
        question = hard_steer_question(outcome.action)
        if _squashed(question).lower() in _squashed(said).lower():
            return ""  # the LLM asked it (an empty question is in any text)
        if self.record_preempts:
            self.preempted.append(question)
            if record:
                self.session.spoke(question, "preempt")
            else:
                self.unheard.append(question)
        return question

    def heard(self, text: str) -> bool:
        """The host heard the bot say ``text``: True when it is engine text (nothing to record).

        Engine text the host emitted is consumed in order; a follow-up question waiting to be
        heard is recorded now, after the LLM's words it follows.
        """
        if not self.preempted or _squashed(self.preempted[0]) != _squashed(text):
            return False
        said = self.preempted.pop(0)
        if said in self.unheard:
            self.unheard.remove(said)
            self.session.spoke(said, "preempt")
        return True

    async def _carry_out(self, action: Action, spoken: list[str]) -> bool:
        """Run the action's calls and collect its message; True when the engine must run again."""
        for call in action.calls:
            done = await self.session.run_call(call)
            self._exchanges.append(ToolExchange(call, done))
        if action.message:
            spoken.append(action.message)
        return any(c.kind != "then" for c in action.calls)


def client_messages(
    session: StewardSession, action: Action, *, events: bool = True
) -> list[dict[str, Any]]:
    """Checklist status messages, then the action's rich response parts, each taken once.

    ``events=False`` leaves the queued conversation events for a later flush. The parts are
    taken even for a call no client reads: taking them carries out their hand-overs and end.
    """
    messages = list(session.take_status(events=events))
    parts = session.take_payloads(action)
    if parts and session.sends_client_messages:
        messages.append({"type": "steward_response", "parts": parts})
    return messages


def hard_steer_question(action: Action) -> str:
    """The open question of a firm steer-back directive in ``action`` ("" when none)."""
    for entry in action.events:
        if entry.tag == "steer_back_hard":
            return str(entry.data.get("msg", ""))
    return ""


def _squashed(text: str) -> str:
    return " ".join(text.split())
