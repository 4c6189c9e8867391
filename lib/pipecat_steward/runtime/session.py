"""``StewardSession``: one conversation's engine runtime for asynchronous hosts.

It owns the session state and is what the Pipecat seam calls: ``decide`` before an inference,
``run_call`` for the calls an action asks for (executors may be ``async``), ``tool_call`` when
the model calls a steward tool. It records a trace of turns (``TurnRecord`` as the synchronous
``Conversation`` does) for ``steward simulate`` and tests. No Pipecat import here.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from loguru import logger

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.procedures import (
    Allow,
    AwaitJudge,
    ProcedureState,
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
from pipecat_steward.core.slots.action import DebugEntry
from pipecat_steward.core.slots.prefill import event_values
from pipecat_steward.core.slots.prompt import SENTINEL
from pipecat_steward.core.slots.prompt import summary as summary_of
from pipecat_steward.core.state import SessionState, SlotError
from pipecat_steward.core.variables import coerce
from pipecat_steward.runtime.anticipation import StepAnticipation, scratch_chooser
from pipecat_steward.runtime.arguments import ToolArguments
from pipecat_steward.runtime.caller_turns import CallerTurns
from pipecat_steward.runtime.checkpoint_schema import FORMAT_VERSION, payload_problem
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.deadlines import deadline
from pipecat_steward.runtime.dispatch import awaited_call, dispatch
from pipecat_steward.runtime.handover import (
    Handover,
    HandoverCallback,
    HandoverKind,
    exit_parts,
    hand_over,
)
from pipecat_steward.runtime.options import SESSION_OPTIONS, check_session_options
from pipecat_steward.runtime.oversight import Judge, Oversight, Rider
from pipecat_steward.runtime.records import BotUtterance, RecordedCall, Source, TurnRecord
from pipecat_steward.runtime.supervision import Supervisor
from pipecat_steward.storage.checkpoints import VersionConflict

if TYPE_CHECKING:
    from pipecat_steward.pipecat.redaction import SessionSecrets

__all__ = ["CONFLICT_DIRECTIVE", "ConflictListener", "Judge", "StewardSession"]

_log = logging.getLogger(__name__)
_CONTAINED = ("tool_exception", "bad_result", "timeout")

ConflictListener = Callable[[dict[str, Any]], Awaitable[None] | None]
"""Told once, with the ``steward_conflict`` message, when another worker took the call over."""

CONFLICT_DIRECTIVE = (
    "Another agent has taken over this call. Do not act on any request and do not promise "
    "anything; if you must speak, ask the caller to hold for a moment."
)


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
        task_timeout_s: float | None = None,
        on_handover: HandoverCallback | None = None,
        caller_turns: CallerTurns | None = None,
        oversight: Oversight | None = None,
        client_messages: bool = True,
    ) -> None:
        # Every parameter but the agent is a session option: all are checked, in one error.
        check_session_options({k: v for k, v in locals().items() if k in SESSION_OPTIONS})
        self.agent = agent
        self.sends_client_messages = client_messages
        """Whether a client reads the steward's messages (``take_status`` gives none when not)."""
        self.caller_turns = caller_turns or CallerTurns()
        """The caller-turn identity this session shares with its relay, monitor and extractor."""
        self.checkpointer = checkpointer
        self.conflict: dict[str, Any] | None = None
        self.conflict_listeners: list[ConflictListener] = []
        self.turns_done = 0
        self.script = ""
        self.heard = ""
        """The caller's words this turn, in clear, for the engine (records keep them redacted)."""
        self.oversight = oversight or Oversight(judge)
        """Where the monitor plugs in its judge and riders (given, never set from outside)."""
        self._handed: tuple[int, int] | None = None
        self.client_outbox: list[dict[str, Any]] = []
        """Messages for the client queued outside the engine."""
        self.before_take: list[Callable[[], None]] = []
        """Called as the outbox is taken: a producer completes the messages it queued there."""
        self.before_checkpoint: list[Callable[[], Awaitable[None]]] = []
        """Awaited before each checkpoint is written: the call's events are stored first."""
        self.bot_said = ""
        """What the bot said last (as records keep it): a bare yes accepts what it offered."""
        self.state = state or SessionState()
        self.rng: Chooser = rng or random.Random(0)
        self.event_data = dict(event_data or {})
        event_values(agent.flow, self.event_data)  # a value of the wrong type fails here, named
        self.channel = channel
        self.anticipation = StepAnticipation()
        """The step anticipated for the next caller turn's words (``anticipate``)."""
        self.turns: list[TurnRecord] = []
        self.last_action: Action | None = None
        self.gate_timeout_s = gate_timeout_s
        self.task_timeout_s = task_timeout_s
        self.on_handover = on_handover
        self.ending = False
        self.ended = False
        self._handovers: list[Handover] = []
        self.arguments = ToolArguments(agent.flow, agent.tools)
        self.supervisor = (
            Supervisor(agent.procedures, agent.tool_logic) if agent.procedures else None
        )
        if self.supervisor is not None:
            self._set_variables(self.supervisor.start(self.state.variables))

    @property
    def judge(self) -> Judge | None:
        """The judge gates ask, as plugged into this session's oversight."""
        return self.oversight.judge

    @property
    def result_riders(self) -> list[Rider]:
        """The riders of tool results, as plugged into this session's oversight."""
        return self.oversight.riders

    @property
    def turn(self) -> TurnRecord:
        """The current turn's record (a record for the opening turn when none started)."""
        if not self.turns:
            self.turns.append(TurnRecord(""))
        return self.turns[-1]

    def decide(
        self, user_text: str = "", *, first_turn: bool = False, speculative: bool = False
    ) -> Action:
        """Run the engine for one inference; a speculative run does not change the state.

        The caller's words are recorded as the engine reads them (surrounding whitespace
        removed); words that are only whitespace start no turn.
        """
        user_text = user_text.strip()
        if not speculative and self.opens_turn(user_text):
            self.open_turn(user_text)
        if self.conflict is not None:
            return self.held(speculative=speculative)
        anticipated = None
        if speculative:
            # A speculative step is an anticipation: it runs on a copy of the chooser, and the
            # committed inference that follows with the same words uses it.
            anticipated = self.anticipation.make(self, user_text, first_turn=first_turn)
        elif user_text and user_text == self.heard:
            anticipated = self.anticipation.take(self, user_text, first_turn=first_turn)
        result = anticipated or step(
            self.agent.flow,
            self.state,
            user_text,
            rng=scratch_chooser(self.rng) if speculative else self.rng,
            event_data=self.event_data,
            channel=self.channel,
            first_turn=first_turn,
            caller_words=self.heard if not speculative else user_text,
        )
        action = result.action
        if not speculative:
            escalated = result.state.status == "escalated" != self.state.status
            self.state = result.state
            self._sync()
            if escalated:
                explicit = any(c.kind == "then" for c in action.calls)
                self._handover("escalation", action.message, {}, explicit)
            self.handed(action)
            self.turn.actions.append(action)
            self.turn.events.extend(action.events)
        return action

    def anticipate(self, user_text: str, *, first_turn: bool) -> Action | None:
        """Run the step a caller turn opening with these words will need, ahead of its inference.

        ``decide`` uses it when nothing it reads has changed by then (see ``StepAnticipation``);
        the session itself is not changed. Returns the step's action (None when none was made),
        so a host can prepare what carrying it out needs.
        """
        if self.conflict is not None:
            return None
        made = self.anticipation.make(self, user_text, first_turn=first_turn)
        self.secrets.prepare(user_text.strip())  # the turn record keeps them redacted
        return made.action if made is not None else None

    def open_turn(self, user_text: str) -> None:
        """Start a caller turn on either engine: the same identity, the same redacted record.

        The engine reads the clear words (``heard``); the turn record, and so every trace and
        event built from it, keeps them redacted.
        """
        self.heard = user_text
        self.caller_turns.taken()
        self.turns.append(TurnRecord(self.secrets.hear(user_text) if user_text else ""))

    def opens_turn(self, user_text: str) -> bool:
        """Whether an inference starts a caller turn (a blank one too, and its own record).

        It does when words were heard, or when the model's previous inference called no tool
        since: only a tool call's result asks for a re-inference within a turn.
        """
        return bool(user_text) or self._handed == self._llm_mark()

    def handed(self, action: Action) -> None:
        """Note the action an inference ended on: the turn goes on after the calls it asks for."""
        self.last_action = action
        carries_on = any(c.kind != "then" for c in action.calls)
        self._handed = None if carries_on else self._llm_mark()

    def _llm_mark(self) -> tuple[int, int] | None:
        return (len(self.turns), len(self.turns[-1].llm_calls)) if self.turns else None

    async def run_call(self, call: ToolCall) -> RecordedCall:
        """Run a call an action asked for and route its result into the state."""
        if self.conflict is not None:
            return self._refuse_stale(call.name, call.args, self.turn.fired)
        if call.kind == "confirm":
            routed = confirm_pending(self.agent.flow, self.state)
            self.state = routed.state
            done = RecordedCall(call.name, {}, "ok" if routed.ok else "error", routed.reply)
        elif call.kind == "executor":
            result = await self._invoke(call.name, call.args, self._deadline(call))
            routed = route_executor(self.agent.flow, self.state, call.name, result)
            self.state = routed.state
            done = RecordedCall(call.name, dict(call.args), "ok" if routed.ok else "error", result)
        else:
            done = RecordedCall(
                call.name, dict(call.args), "ok", await self._invoke(call.name, call.args)
            )
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
            "format_version": FORMAT_VERSION,
            "agent": self.agent.name,
            "state": self.state.to_json(),
            "turns_done": self.turns_done,
            "script": self.script,
        }
        if self.bot_said:
            data["bot_said"] = self.bot_said
        if self.supervisor is not None:
            data["procedures"] = self.supervisor.state.to_dict()
        return data

    def load_payload(self, data: Mapping[str, Any]) -> None:
        """Restore from ``payload()`` output."""
        self.state = SessionState.from_json(str(data["state"]))
        self.turns_done = int(data.get("turns_done", 0))
        self.script = str(data.get("script", ""))
        self.bot_said = str(data.get("bot_said", ""))
        if self.supervisor is not None and "procedures" in data:
            self.supervisor.state = ProcedureState.from_dict(data["procedures"])

    async def save(self) -> None:
        """Checkpoint now (a no-op without a store, or once another worker took the call)."""
        if self.checkpointer is None or self.conflict is not None:
            return
        for store_first in list(self.before_checkpoint):
            try:
                await store_first()
            except Exception:  # the checkpoint matters more than the events before it
                logger.exception("steward: storing the events before a checkpoint failed")
        try:
            await self.checkpointer.save(self.payload())
        except VersionConflict as exc:
            await self._stale(exc)

    async def _stale(self, exc: VersionConflict) -> None:
        """Stop driving the call: hide every tool, fire nothing, tell the app once."""
        if self.conflict is not None:
            return
        self.conflict = {
            "type": "steward_conflict",
            "session": exc.identity.scope,
            "expected_version": exc.expected,
            "current_version": exc.current,
            "message": f"another worker took over call {exc.identity.scope}; this worker stopped",
        }
        logger.warning(f"steward_conflict: {self.conflict['message']} ({exc})")
        for listener in list(self.conflict_listeners):
            try:
                outcome = listener(dict(self.conflict))
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as err:  # one failing listener must not silence the others
                logger.exception(f"steward_conflict listener failed: {err}")

    def held(self, *, speculative: bool = False) -> Action:
        """The action of a stale worker: no tools, no calls, a directive to hold."""
        suffix = f"{SENTINEL}\n<system_directive>\n{CONFLICT_DIRECTIVE}\n</system_directive>"
        action = Action(
            phase="terminal", status="in_progress", directive=CONFLICT_DIRECTIVE, suffix=suffix
        )
        if not speculative:
            self.handed(action)
            self.turn.actions.append(action)
        return action

    def _refuse_stale(
        self, name: str, args: Mapping[str, Any], into: list[RecordedCall]
    ) -> RecordedCall:
        reply = {"error": True, "error_code": "steward_conflict", "directive": CONFLICT_DIRECTIVE}
        call = RecordedCall(name, dict(args), "refused", reply)
        into.append(self.recorded(call))
        return call

    def payload_problem(self, data: Mapping[str, Any]) -> str | None:
        """Why ``data`` cannot be restored into this session, or None (the schema check)."""
        return payload_problem(data, agent=self.agent.name)

    async def restore(self) -> bool:
        """Restore by identity before any routing; True when a checkpoint was restored.

        Raises:
            InvalidCheckpoint: When the checkpoint cannot be restored (``on_invalid='fail'``).
        """
        if self.checkpointer is None:
            return False
        data = await self.checkpointer.load(self.payload_problem)
        if data is None:
            return False
        before = self.payload()
        try:
            self.load_payload(data)
        except Exception as exc:  # the schema passed but the state does not rebuild
            self.load_payload(before)
            await self.checkpointer.reject(f"the state does not rebuild: {exc}")
            return False
        return True

    def _deadline(self, call: ToolCall) -> float:
        """The task's execution deadline (the session's override first)."""
        return deadline(self.agent, call.name, task=call.task, override=self.task_timeout_s)

    async def invoke(self, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Run one of the agent's functions with every guard of an engine call (its deadline too)."""
        return await self._invoke(name, args)

    async def _invoke(
        self, name: str, args: Mapping[str, Any], timeout: float | None = None
    ) -> dict[str, Any]:
        """Run one of the agent's functions (sync or async); whatever it raises is contained.

        A call is cut off after ``timeout`` seconds (by default its ``deadline``) and answered
        as a ``timeout`` error; its late result is dropped. A synchronous function runs in a thread, so a blocking backend
        never stalls the call's audio (the thread finishes on its own; its result is ignored).
        """
        fn = self.agent.tools.get(name)
        if fn is None:
            return {"error": True, "error_code": "missing_tool", "tool": name}
        if timeout is None:
            timeout = deadline(self.agent, name, override=self.task_timeout_s)
        try:
            result = await asyncio.wait_for(_awaited(awaited_call(fn, args)), timeout)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(_awaited(result), timeout)
        except TimeoutError:
            _log.warning(
                "tool %s gave no result within %ss; it takes its failure path", name, timeout
            )
            result = {
                "error": True,
                "error_code": "timeout",
                "timeout_s": timeout,
                "message": f"{name} gave no result within {timeout:g} s and was not waited for: "
                "its outcome is unknown. Do not say it succeeded.",
            }
        except Exception as exc:
            _log.exception("tool %s raised; the call takes its failure path", name)
            result = {
                "error": True,
                "error_code": "tool_exception",
                "exception": type(exc).__name__,
            }
        if not isinstance(result, Mapping):
            _log.error("tool %s returned %s, not a mapping", name, type(result).__name__)
            result = {"error": True, "error_code": "bad_result", "tool": name}
        out = dict(cast(Mapping[str, Any], result))
        self._note_failure(name, out)
        return out

    def _note_failure(self, name: str, result: Mapping[str, Any]) -> None:
        """Put a contained exception or bad result into the turn's trace events."""
        code = result.get("error_code")
        if result.get("error") and code in _CONTAINED:
            data = {"tool": name, "code": code, "exception": result.get("exception")}
            tag = "tool_timeout" if code == "timeout" else "tool_exception"
            self.turn.events.append(DebugEntry(tag, self.state.invocation, data))

    def _argument_problem(self, name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The informative result for arguments that do not fit the tool; a setter's slot counts an error."""
        problem = self.arguments.problem(name, args)
        if problem is not None and name in self.agent.flow.setters:
            state = self.state.copy()
            slot = self.agent.flow.setters[name][0][1]
            state.slot_errors.append(SlotError(slot, "bad_arguments"))
            self.state = state
        return problem

    async def handle_tool(
        self, name: str, args: Mapping[str, Any], call_id: str | None = None
    ) -> RecordedCall:
        """The one entry of a tool call the model made, on every host.

        The agent's own tools go through the procedure gate (``agent_tool_call``); steward tools,
        and any other name, through ``tool_call``, which refuses what is not visible now. Both
        check the arguments against the tool's schema before user code runs, contain what user
        code raises and record the call in the turn.
        """
        if name in self.agent.llm_tools:
            return await self.agent_tool_call(name, args, call_id)
        return self.tool_call(name, args)

    def offered(self, visible: frozenset[str]) -> frozenset[str]:
        """The tool names a model is shown when ``visible`` steward tools are visible.

        Those plus the agent's own; none once another worker took the call over.
        """
        if self.conflict is not None:
            return frozenset()
        return visible | frozenset(self.agent.llm_tools)

    def tool_call(self, name: str, args: Mapping[str, Any]) -> RecordedCall:
        """Route a steward tool the model called; a tool not visible now is refused."""
        if self.conflict is not None:
            return self._refuse_stale(name, args, self.turn.llm_calls)
        visible = self.last_action.visible_tools if self.last_action else frozenset()
        if name not in visible:
            reply = {"error": True, "error_code": "not_available", "directive": self._directive()}
            call = RecordedCall(name, dict(args), "refused", reply)
        elif (problem := self._argument_problem(name, args)) is not None:
            call = RecordedCall(name, dict(args), "error", self._ride(problem))
        else:
            routed = dispatch(
                self.agent.flow,
                self.state,
                self.agent.tools,
                name,
                args,
                user_text=self.heard,
                check_visible=False,
                bot_text=self.bot_said,
            )
            self.state = routed.state
            self._sync()
            self._note_failure(name, routed.reply)
            call = RecordedCall(
                name, dict(args), "ok" if routed.ok else "error", self._ride(routed.reply)
            )
        self.turn.llm_calls.append(self.recorded(call))
        return call

    async def agent_tool_call(
        self, name: str, args: Mapping[str, Any], call_id: str | None = None
    ) -> RecordedCall:
        """Run one of the agent's own tools the model called, through the procedure gate."""
        if self.conflict is not None:
            return self._refuse_stale(name, args, self.turn.llm_calls)
        problem = self._argument_problem(name, args)
        decision = await self._gate(name) if problem is None else None
        if problem is not None:
            call = RecordedCall(name, dict(args), "error", self._ride(problem))
        elif isinstance(decision, Veto):
            call = RecordedCall(name, dict(args), "refused", decision.result())
        else:
            result = await self._invoke(name, args)
            note = self._tool_result(name, result, call_id)
            reply = self._ride({**result, **({"steward_note": note} if note else {})})
            call = RecordedCall(name, dict(args), "error" if result.get("error") else "ok", reply)
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

    def take_status(self, *, events: bool = True) -> list[dict[str, Any]]:
        """Queued messages for the client, each delivered once.

        The ``procedure_status`` message when the checklist differs from the one last sent
        (the current one, however many changes led to it), then what others queued in
        ``client_outbox`` (the conversation events); ``events=False`` leaves the outbox queued.
        None at all for a call no client reads (``client_messages=False``).
        """
        if not self.sends_client_messages:
            self.client_outbox = []  # what an app queued there would only pile up
            return []
        out: list[dict[str, Any]] = []
        if events:
            for complete in self.before_take:
                complete()
            out, self.client_outbox = self.client_outbox, []
        if self.supervisor is None:
            return out
        return [*self.supervisor.take(self.state.variables), *out]

    def checklist(self) -> dict[str, Any] | None:
        """The current ``procedure_status`` payload as a copy of its own (None: no procedures)."""
        if self.supervisor is None:
            return None
        return copy.deepcopy(self.supervisor.status(self.state.variables))

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
        """Rich response parts (buttons, cards) to deliver now on the session's channel.

        A preempt's own parts, else those stashed for the LLM's reply; stashed parts go once.
        """
        parts = [dict(p) for p in action.response]
        if not action.preempt and self.state.pending_payloads:
            parts += [dict(p) for p in self.state.pending_payloads]
            self.state.pending_payloads = []
        self.turn.payloads.extend(parts)
        transfers, end = exit_parts(parts)
        for part in transfers:
            self._handover("transfer", action.message, part, False)
        if end and not self.ending:
            self.ending = True
            self.turn.events.append(DebugEntry("end_session", self.state.invocation, {}))
        return parts

    def _handover(
        self, kind: HandoverKind, message: str, details: Mapping[str, Any], explicit: bool
    ) -> None:
        summary = summary_of(self.agent.flow, self.state)
        self._handovers.append(Handover(kind, message, summary, dict(details), explicit))

    async def run_exits(self) -> None:
        """Carry out this inference's hand-overs: the flow's hand-over tool, then the app's callback."""
        handovers, self._handovers = self._handovers, []
        for handover in handovers:
            data = await hand_over(self, handover)
            self.turn.events.append(DebugEntry("handover", self.state.invocation, data))

    def _directive(self) -> str:
        return self.last_action.directive if self.last_action else ""

    def spoke(self, text: str, source: Source) -> None:
        """Record something the bot said this turn (``llm``, ``preempt``, ``announce``, ``note``)."""
        self.bot_said = self.secrets.redact(text)
        self.turn.bot.append(BotUtterance(self.bot_said, source))

    @functools.cached_property
    def secrets(self) -> SessionSecrets:
        """What must not appear in clear in this session's records (see ``redact``).

        The one shared with the session's monitor and extractor, looked up once: every caller
        turn and every utterance reads it.
        """
        from pipecat_steward.pipecat.redaction import secrets_for

        return secrets_for(self)

    def recorded(self, call: RecordedCall) -> RecordedCall:
        """``call`` as a turn record keeps it: secrets in its arguments and result redacted."""
        redact = self.secrets.bound()  # one lookup of the secrets for both trees
        return RecordedCall(
            call.name,
            redact_tree(call.args, redact),
            call.outcome,
            redact_tree(call.result, redact),
        )


async def _awaited(result: Awaitable[Any]) -> Any:
    return await result
