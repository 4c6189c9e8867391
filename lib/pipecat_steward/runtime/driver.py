"""The engine's invocation loop for one inference, free of any host framework.

``Driver.inference`` runs the session's decision and carries it out through a ``Host``: it
runs the calls the engine asks for (executors, the auto-confirm, exit calls) shielded from
cancellation so a barge-in never loses a result or leaves half a tool exchange, collects
preempted messages, cascades until the engine needs the LLM or has spoken, and lets calls that
were in flight during a barge-in finish before the next decision (no executor fires twice). The
Pipecat hook and the direct (framework-free) scenario player are its two hosts.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from pipecat_steward.core.slots import Action, ToolCall
from pipecat_steward.runtime.records import RecordedCall
from pipecat_steward.runtime.session import StewardSession

__all__ = ["Driver", "Host"]

_MAX_CASCADE = 20


class Host(Protocol):
    """What a driver needs from the framework around it."""

    async def run_llm(self, action: Action) -> None:
        """Set the action's tools and instruction suffix, then run the real inference."""
        ...

    async def speak(self, text: str) -> None:
        """Say ``text`` verbatim as the bot (a preempt)."""
        ...

    async def deliver(self, action: Action) -> None:
        """Deliver rich response parts and checklist status for ``action``."""
        ...

    def record(self, call: ToolCall, done: RecordedCall) -> None:
        """Record an engine-run call and its result in the conversation history."""
        ...

    async def end(self) -> None:
        """End the call once what was said so far has been spoken (an ``end_session`` part)."""
        ...


class Driver:
    """Runs one session's inferences; share one driver between hosts of the same session."""

    def __init__(self, session: StewardSession) -> None:
        self.session = session
        self.inflight: set[asyncio.Future[bool]] = set()
        self.preempted: list[str] = []

    async def inference(
        self, host: Host, user_text: str, *, first_turn: bool, speculative: bool
    ) -> None:
        """Decide and act for one inference request, then carry out its hand-overs and ending."""
        await self.settle()
        await self._cascade(host, user_text, first_turn=first_turn, speculative=speculative)
        if not speculative:
            await self.exits(self.session, host)

    @staticmethod
    async def exits(session: StewardSession, host: Host) -> None:
        """Run the session's hand-overs; end the call once when an ``end_session`` part was delivered."""
        await session.run_exits()
        if session.ending and not session.ended:
            session.ended = True
            await host.end()

    async def _cascade(
        self, host: Host, user_text: str, *, first_turn: bool, speculative: bool
    ) -> None:
        spoken: list[str] = []
        for _ in range(_MAX_CASCADE):
            action = self.session.decide(user_text, first_turn=first_turn, speculative=speculative)
            user_text = ""
            if speculative or not (action.preempt or action.calls):
                await self._speak(host, spoken)
                await host.run_llm(action)
                if not speculative:
                    await host.deliver(action)
                return
            await host.deliver(action)
            carried = asyncio.ensure_future(self._carry_out(host, action, spoken))
            self.inflight.add(carried)
            carried.add_done_callback(self.inflight.discard)
            if not await asyncio.shield(carried):
                break
        await self._speak(host, spoken)

    async def settle(self) -> None:
        """Let calls started before a barge-in finish before the next decision."""
        if self.inflight:
            await asyncio.gather(*self.inflight, return_exceptions=True)

    async def _carry_out(self, host: Host, action: Action, spoken: list[str]) -> bool:
        """Run the action's calls and collect its message; True when the engine must run again."""
        for call in action.calls:
            done = await self.session.run_call(call)
            host.record(call, done)
        if action.message:
            spoken.append(action.message)
        return any(c.kind != "then" for c in action.calls)

    async def _speak(self, host: Host, spoken: list[str]) -> None:
        if not spoken:
            return
        text = " ".join(spoken)
        spoken.clear()
        self.preempted.append(text)
        self.session.spoke(text, "preempt")
        await host.speak(text)
