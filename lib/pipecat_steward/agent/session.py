"""``StewardSession``: one conversation's engine runtime for asynchronous hosts.

It owns the session state and is what the Pipecat seam calls: ``decide`` before an inference,
``run_call`` for the calls an action asks for (executors may be ``async``), ``tool_call`` when
the model calls a steward tool. It records a trace of turns (``TurnRecord`` as the synchronous
``Conversation`` does) for ``steward simulate`` and tests. No Pipecat import here.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Mapping
from typing import Any

from pipecat_steward.agent.conversation import BotUtterance, Call, Source, TurnRecord
from pipecat_steward.agent.dispatch import dispatch
from pipecat_steward.agent.loader import Agent
from pipecat_steward.agent.quality import answer_questions_first
from pipecat_steward.core.slots import (
    Action,
    Chooser,
    ToolCall,
    confirm_pending,
    route_executor,
    step,
)
from pipecat_steward.core.state import SessionState

__all__ = ["StewardSession"]


class StewardSession:
    """The engine side of one conversation.

    Attributes:
        agent: The loaded agent (flow, tools, prompt).
        state: The current session state.
        turns: One record per caller turn, in order.
        last_action: The action of the latest non-speculative invocation.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        state: SessionState | None = None,
        rng: Chooser | None = None,
        event_data: Mapping[str, Any] | None = None,
        channel: str | None = None,
    ) -> None:
        self.agent = agent
        self.state = state or SessionState()
        self.rng: Chooser = rng or random.Random(0)
        self.event_data = dict(event_data or {})
        self.channel = channel
        self.turns: list[TurnRecord] = []
        self.last_action: Action | None = None

    @property
    def turn(self) -> TurnRecord:
        """The current turn's record (a record for the opening turn when none started)."""
        if not self.turns:
            self.turns.append(TurnRecord(""))
        return self.turns[-1]

    def decide(
        self, user_text: str = "", *, first_turn: bool = False, speculative: bool = False
    ) -> Action:
        """Run the engine for one inference; a speculative run does not change the state."""
        if user_text and not speculative:
            self.turns.append(TurnRecord(user_text))
        result = step(
            self.agent.flow,
            self.state,
            user_text,
            rng=self.rng,
            event_data=self.event_data,
            channel=self.channel,
            first_turn=first_turn,
        )
        action = answer_questions_first(
            result.action, self.turn.user if not speculative else user_text
        )
        if not speculative:
            self.state = result.state
            self.last_action = action
            self.turn.actions.append(action)
            self.turn.events.extend(action.events)
        return action

    async def run_call(self, call: ToolCall) -> Call:
        """Run a call an action asked for and route its result into the state."""
        if call.kind == "confirm":
            routed = confirm_pending(self.agent.flow, self.state)
            self.state = routed.state
            done = Call(call.name, {}, "ok" if routed.ok else "error", routed.reply)
        elif call.kind == "executor":
            result = await self._invoke(call.name, call.args)
            routed = route_executor(self.agent.flow, self.state, call.name, result)
            self.state = routed.state
            done = Call(call.name, dict(call.args), "ok" if routed.ok else "error", result)
        else:
            done = Call(call.name, dict(call.args), "ok", await self._invoke(call.name, call.args))
        self.turn.fired.append(done)
        return done

    async def _invoke(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        fn = self.agent.tools.get(name)
        if fn is None:
            return {"error": True, "error_code": "missing_tool", "tool": name}
        try:
            result = fn(**args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            return {"error": True, "error_code": type(exc).__name__}
        return dict(result)

    def tool_call(self, name: str, args: Mapping[str, Any]) -> Call:
        """Route a steward tool the model called; a tool not visible now is refused."""
        visible = self.last_action.visible_tools if self.last_action else frozenset()
        if name not in visible:
            reply = {"error": True, "error_code": "not_available", "directive": self._directive()}
            call = Call(name, dict(args), "refused", reply)
        else:
            routed = dispatch(
                self.agent.flow,
                self.state,
                self.agent.tools,
                name,
                args,
                user_text=self.turn.user,
                check_visible=False,
            )
            self.state = routed.state
            call = Call(name, dict(args), "ok" if routed.ok else "error", routed.reply)
        self.turn.llm_calls.append(call)
        return call

    def take_payloads(self, action: Action) -> list[dict[str, Any]]:
        """Rich response parts to deliver now (seed 000 §8a).

        A preempt's own parts, else those stashed for the LLM's reply; stashed parts go once.
        """
        parts = [dict(p) for p in action.response]
        if not action.preempt and self.state.pending_payloads:
            parts += [dict(p) for p in self.state.pending_payloads]
            self.state.pending_payloads = []
        self.turn.payloads.extend(parts)
        return parts

    def _directive(self) -> str:
        return self.last_action.directive if self.last_action else ""

    def spoke(self, text: str, source: Source) -> None:
        """Record something the bot said this turn (``llm``, ``preempt``, ``announce``, ``note``)."""
        self.turn.bot.append(BotUtterance(text, source))
