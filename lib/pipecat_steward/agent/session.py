"""``StewardSession``: one conversation's engine runtime for asynchronous hosts.

It owns the session state and is what the Pipecat seam calls: ``decide`` before an inference,
``run_call`` for the calls an action asks for (executors may be ``async``), ``tool_call`` when
the model calls a steward tool. It records a trace of turns (``TurnRecord`` as the synchronous
``Conversation`` does) for ``steward simulate`` and tests. No Pipecat import here.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pipecat_steward.agent.checkpointing import Checkpointer
from pipecat_steward.agent.dispatch import dispatch
from pipecat_steward.agent.loader import Agent
from pipecat_steward.agent.quality import answer_questions_first
from pipecat_steward.agent.records import BotUtterance, Call, Source, TurnRecord
from pipecat_steward.agent.supervision import Supervisor
from pipecat_steward.core.procedures import (
    Allow,
    AwaitJudge,
    ProcedureState,
    Verdict,
    Veto,
    resolve_timeout,
)
from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.core.slots import (
    Action,
    Chooser,
    ToolCall,
    confirm_pending,
    route_executor,
    step,
)
from pipecat_steward.core.state import SessionState
from pipecat_steward.core.variables import coerce

if TYPE_CHECKING:
    from pipecat_steward.pipecat.redaction import SessionSecrets

__all__ = ["Judge", "StewardSession"]

Judge = Callable[[AwaitJudge], Awaitable[Verdict | None]]
"""Asked for a verdict when a gate waits on judge steps (the monitor, issue 7; or a test)."""


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
        judge: Judge | None = None,
        gate_timeout_s: float | None = None,
        checkpointer: Checkpointer | None = None,
    ) -> None:
        self.agent = agent
        self.checkpointer = checkpointer
        self.turns_done = 0
        self.script = ""
        self.heard = ""
        """The caller's words this turn, in clear, for the engine (records keep them redacted)."""
        self.result_riders: list[Callable[[], str | None]] = []
        self.state = state or SessionState()
        self.rng: Chooser = rng or random.Random(0)
        self.event_data = dict(event_data or {})
        self.channel = channel
        self.turns: list[TurnRecord] = []
        self.last_action: Action | None = None
        self.judge = judge
        self.gate_timeout_s = gate_timeout_s
        self.supervisor = (
            Supervisor(agent.procedures, agent.tool_logic) if agent.procedures else None
        )
        if self.supervisor is not None:
            self._set_variables(self.supervisor.start(self.state.variables))

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
            self.heard = user_text  # the engine reads the clear words; the record does not keep them
            self.turns.append(TurnRecord(self.secrets.hear(user_text)))
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
            result.action, self.heard if not speculative else user_text
        )
        if not speculative:
            self.state = result.state
            self._sync()
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
        self._sync()
        self.turn.fired.append(self.recorded(done))
        await self.save()
        return done

    def tool_specs(self) -> dict[str, tuple[str, dict[str, Any], list[str]]]:
        """Extra tools this session manages besides the flow's (description, properties, required)."""
        return {}

    def payload(self) -> dict[str, Any]:
        """Everything needed to resume this conversation, as JSON-safe data."""
        data: dict[str, Any] = {
            "state": self.state.to_json(),
            "turns_done": self.turns_done,
            "script": self.script,
        }
        if self.supervisor is not None:
            data["procedures"] = self.supervisor.state.to_dict()
        return data

    def load_payload(self, data: Mapping[str, Any]) -> None:
        """Restore from ``payload()`` output."""
        self.state = SessionState.from_json(str(data["state"]))
        self.turns_done = int(data.get("turns_done", 0))
        self.script = str(data.get("script", ""))
        if self.supervisor is not None and "procedures" in data:
            self.supervisor.state = ProcedureState.from_dict(data["procedures"])

    async def save(self) -> None:
        """Checkpoint now (a no-op without a store)."""
        if self.checkpointer is not None:
            await self.checkpointer.save(self.payload())

    async def restore(self) -> bool:
        """Restore by identity before any routing; True when a checkpoint was found."""
        if self.checkpointer is None:
            return False
        data = await self.checkpointer.load()
        if data is None:
            return False
        self.load_payload(data)
        return True

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
                user_text=self.heard,
                check_visible=False,
            )
            self.state = routed.state
            self._sync()
            call = Call(name, dict(args), "ok" if routed.ok else "error", self._ride(routed.reply))
        self.turn.llm_calls.append(self.recorded(call))
        return call

    async def agent_tool_call(
        self, name: str, args: Mapping[str, Any], call_id: str | None = None
    ) -> Call:
        """Run one of the agent's own tools the model called, through the procedure gate."""
        decision = await self._gate(name)
        if isinstance(decision, Veto):
            call = Call(name, dict(args), "refused", decision.result())
        else:
            result = await self._invoke(name, args)
            note = self._tool_result(name, result, call_id)
            reply = self._ride({**result, **({"steward_note": note} if note else {})})
            call = Call(name, dict(args), "error" if result.get("error") else "ok", reply)
        self.turn.llm_calls.append(self.recorded(call))
        return call

    async def _gate(self, tool: str) -> Allow | Veto:
        """Decide a gated tool; wait (bounded) for a judge when only judge steps remain."""
        if self.supervisor is None:
            return Allow(tool)
        decision = self.supervisor.gate(self.state.variables, tool)
        if isinstance(decision, AwaitJudge):
            decision = await self._await_judge(decision)
        if tool in self.agent.tool_logic:
            self._record_gate(decision)
        if isinstance(decision, Veto):
            self.supervisor.block(decision)
        return decision

    async def _await_judge(self, pending: AwaitJudge) -> Allow | Veto:
        timeout = pending.timeout_s if self.gate_timeout_s is None else self.gate_timeout_s
        verdict = None
        cause = "monitor_unavailable" if self.judge is None else "judge_timeout"
        if self.judge is not None:
            try:
                verdict = await asyncio.wait_for(self.judge(pending), timeout)
            except TimeoutError:
                verdict = None
            except Exception:  # the judge itself failed (its model is down or answered garbage)
                verdict, cause = None, "monitor_unavailable"
        if verdict is not None and self.supervisor is not None:
            self._set_variables(self.supervisor.verdict(self.state.variables, verdict))
            again = self.supervisor.gate(self.state.variables, pending.tool)
            if not isinstance(again, AwaitJudge):
                return again
            cause = "prerequisites"  # the judge answered: the steps are really still open
        return resolve_timeout(pending, cause)

    def _record_gate(self, decision: Allow | Veto) -> None:
        entry: dict[str, Any] = {"tool": decision.tool, "decision": type(decision).__name__.lower()}
        if isinstance(decision, Veto):
            entry.update(reason=decision.reason, open=[s.id for s in decision.open_steps])
        elif decision.log:
            entry["log"] = decision.log
        self.turn.gates.append(entry)

    def _tool_result(self, name: str, result: Mapping[str, Any], call_id: str | None) -> str | None:
        if self.supervisor is None:
            return None
        variables, note = self.supervisor.tool_result(
            self.state.variables, name, dict(result), call_id
        )
        self._set_variables(variables)
        return note

    def host_write(self, values: Mapping[str, Any]) -> None:
        """Write host-owned values (linked variables, e.g. a verified caller) to the blackboard."""
        specs = {v.name: v for v in self.agent.variables}
        written = {k: coerce(specs[k], v) if k in specs else v for k, v in values.items()}
        self._set_variables({**self.state.variables, **written})
        self._sync()

    def take_status(self) -> list[dict[str, Any]]:
        """Queued ``procedure_status`` messages for the client (each delivered once)."""
        if self.supervisor is None:
            return []
        out, self.supervisor.outbox = self.supervisor.outbox, []
        return out

    def checklist(self) -> dict[str, Any] | None:
        """The current ``procedure_status`` payload (None without procedures)."""
        return dict(self.supervisor.status(self.state.variables)) if self.supervisor else None

    def _sync(self) -> None:
        if self.supervisor is not None:
            self._set_variables(self.supervisor.sync(self.state.variables))

    def _set_variables(self, variables: Mapping[str, Any]) -> None:
        state = self.state.copy()
        state.variables = dict(variables)
        self.state = state

    def _ride(self, reply: Mapping[str, Any]) -> dict[str, Any]:
        """Let queued corrections ride this tool result (channels with no silent note)."""
        out = dict(reply)
        for rider in self.result_riders:
            note = rider()
            if note:
                out["steward_correction"] = note
        return out

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
        self.turn.bot.append(BotUtterance(self.secrets.redact(text), source))

    @property
    def secrets(self) -> SessionSecrets:
        """What must not appear in clear in this session's records (see ``redact``)."""
        from pipecat_steward.pipecat.redaction import secrets_for

        return secrets_for(self)

    def recorded(self, call: Call) -> Call:
        """``call`` as a turn record keeps it: secrets in its arguments and result redacted."""
        redact = self.secrets.redact
        return Call(call.name, redact_tree(call.args, redact), call.outcome, redact_tree(call.result, redact))
