"""``TransactionSession``: multi-turn transactions driven through the same seam.

An agent with ``intents:`` in its agent.yaml gets this session instead of the plain one. The
LLM sees the transaction vocabulary (``start_<intent>``, the active intent's setters,
``cancel_transaction``, and while confirming ``confirm/reject/correct_transaction``); its calls
in a turn are routed together by the pure routing precedence of ``core.transactions``; the
confirmation question is spoken by code; a pure affirmative confirms with no LLM call; the
idempotency key is checkpointed before the executor runs; outcomes are reported once.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast
from urllib.parse import quote

from loguru import logger

from pipecat_steward.agent.config import IntentConfig
from pipecat_steward.agent.loader import Agent, validated_list
from pipecat_steward.core.slots import Action, DebugEntry, ToolCall
from pipecat_steward.core.transactions import (
    EXECUTOR_TASK,
    PRE_VALIDATION_TASK,
    Desk,
    DeskContext,
    Intents,
    ToolSpec,
    Transaction,
    TransactionState,
    caller_turn,
    collect,
    continue_turn,
    offer_from_json,
    offer_to_json,
    prompt_model,
    ran,
    refusal,
    route_calls,
    to_action,
    tool_specs,
)
from pipecat_steward.runtime.checkpoint_schema import payload_problem
from pipecat_steward.runtime.records import RecordedCall
from pipecat_steward.runtime.session import StewardSession

__all__ = ["IntentConfig", "TransactionSession", "ToolSpec", "idempotent", "load_intents"]

F = TypeVar("F", bound=Callable[..., Any])


def idempotent(fn: F) -> F:
    """Declare that an executor honours its ``idempotency_key``: a key it has seen is a replay.

    After a crash between the executor's call and the checkpoint of its result, the call is
    made again with the same key, so an irreversible executor must return the recorded outcome
    for a key it already acted on instead of acting twice. ``steward validate`` warns about an
    intent whose executor is neither marked so nor the intent ``read_only``.
    """
    setattr(fn, "__steward_idempotent__", True)  # noqa: B010 - a marker, also read from source
    return fn


def load_intents(raw: object) -> tuple[IntentConfig, ...]:
    """Validate ``intents:``; errors name the path.

    An agent's ``intents:`` are validated once, not once per call: the result is kept for the
    same mapping object (the cache holds it, so its identity stays valid).
    """
    hit = _VALIDATED.get(id(raw))
    if hit is not None and hit[0] is raw:
        return hit[1]
    intents = tuple(validated_list(IntentConfig, raw, "intents"))
    if len(_VALIDATED) >= _VALIDATED_MAX:
        _VALIDATED.pop(next(iter(_VALIDATED)))
    _VALIDATED[id(raw)] = (raw, intents)
    return intents


_VALIDATED: dict[int, tuple[object, tuple[IntentConfig, ...]]] = {}
_VALIDATED_MAX = 64


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class TransactionSession(StewardSession):
    """A session whose control flow is the transaction runtime: a thin stateful shell.

    The decisions live in ``core.transactions.desk``; this class keeps the ``Desk``, asks the
    core for each invocation, runs the calls it asks for, and checkpoints around the executor.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        clock: Callable[[], str] | None = None,
        call_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(agent, **kwargs)
        # Scopes the idempotency keys of a call that has no checkpoint identity: without it two
        # calls of one agent would share keys, and the backend would answer the second caller
        # from the first one's record.
        self.call_id = call_id or uuid.uuid4().hex
        self.intents = {i.name: i for i in load_intents(agent.raw.get("intents"))}
        configs = list(self.intents.values())
        self.desk_intents = Intents.of([i.spec() for i in configs], [i.texts() for i in configs])
        self.catalog = self.desk_intents.catalog
        self.desk = Desk()
        self.clock = clock or _utc_now
        self._topic: str | None = None

    @property
    def tstate(self) -> TransactionState:
        """The transaction latch."""
        return self.desk.state

    @tstate.setter
    def tstate(self, state: TransactionState) -> None:
        self.desk = dataclasses.replace(self.desk, state=state)

    # -- the seam's interface ---------------------------------------------------------------

    def decide(
        self, user_text: str = "", *, first_turn: bool = False, speculative: bool = False
    ) -> Action:
        """Route the turn and say what happens next (a speculative call changes nothing)."""
        if self.conflict is not None:
            return super().decide(user_text, first_turn=first_turn, speculative=speculative)
        if speculative:
            ctx = self._context()
            return to_action(ctx, self.desk, prompt_model(ctx, self.desk))[1]
        user_text = user_text.strip()
        if self.opens_turn(user_text):
            self.open_turn(user_text)
        ctx = self._context()
        if user_text:
            turned = caller_turn(ctx, self.desk, user_text)
        elif self.desk.calls:
            turned = route_calls(ctx, self.desk)
        else:
            turned = continue_turn(ctx, self.desk)
        self.desk, action = to_action(ctx, turned.desk, turned.next)
        self._sync_topic()
        self.handed(action)
        self.turn.actions.append(action)
        self.turn.events.extend(action.events)
        return action

    def anticipate(self, user_text: str, *, first_turn: bool) -> Action | None:
        """Nothing: a transaction turn reads the clock and the turn count as it is taken."""
        return None

    def tool_call(self, name: str, args: Mapping[str, Any]) -> RecordedCall:
        """Collect a transaction tool the LLM called; the turn's calls are routed together."""
        if self.conflict is not None:
            return super().tool_call(name, args)
        reply = refusal(self._context(), self.desk, name, self.heard)
        if reply is not None:
            call = RecordedCall(name, dict(args), "refused", reply)
        else:
            call = self._collect(name, args)
        self.turn.llm_calls.append(self.recorded(call))
        return call

    async def run_call(self, call: ToolCall) -> RecordedCall:
        """Run pre-validation or the transaction's executor, checkpointing around it."""
        if call.task not in (PRE_VALIDATION_TASK, EXECUTOR_TASK):
            return await super().run_call(call)
        await self.save()  # the idempotency key is durable before the executor acts
        if self.conflict is not None:  # another worker owns the call now: it runs the executor
            return await super().run_call(call)
        result = await self._invoke(call.name, call.args)
        ok = bool(result.get("success", not result.get("error")))
        self.desk = ran(self._context(), self.desk, call, result, ok)
        done = RecordedCall(call.name, dict(call.args), "ok" if ok else "error", result)
        self.turn.fired.append(self.recorded(done))
        await self.save()
        return done

    def tool_specs(self) -> dict[str, ToolSpec]:
        """Schemas of the transaction tools, for the model."""
        return tool_specs(self.desk_intents)

    def payload(self) -> dict[str, Any]:
        return {
            **super().payload(),
            "transactions": self.tstate.to_json(),
            "topic": self._topic,
            "offer": offer_to_json(self.desk.offer),
        }

    def payload_problem(self, data: Mapping[str, Any]) -> str | None:
        return payload_problem(data, agent=self.agent.name, transactions=True)

    def load_payload(self, data: Mapping[str, Any]) -> None:
        super().load_payload(data)
        if "transactions" in data:
            self.tstate = TransactionState.from_json(str(data["transactions"]))
        topic = data.get("topic")
        self._topic = str(topic) if topic else None
        self.desk = dataclasses.replace(self.desk, offer=offer_from_json(data.get("offer")))

    def _sync_topic(self) -> None:
        """Entering an intent arms its topic's procedure; leaving it disarms it."""
        txn = self.tstate.active_transaction
        topic = txn.intent if txn is not None else None
        if self.supervisor is None or topic == self._topic:
            return
        variables = self.state.variables
        if self._topic is not None:
            variables = self.supervisor.leave_topic(variables, self._topic)
        if topic is not None:
            variables = self.supervisor.enter_topic(variables, topic)
        self._topic = topic
        self._set_variables(variables)

    def _context(self) -> DeskContext:
        return DeskContext(self.desk_intents, self._scope(), self.clock(), len(self.turns))

    def _collect(self, name: str, args: Mapping[str, Any]) -> RecordedCall:
        """Take the call; a parameter setter's validator runs first and may change the value."""
        if name in self.agent.validators:
            result = self._validate(name, self.agent.tools[name], args)
            if result.get("error"):
                return RecordedCall(name, dict(args), "error", result)
            args = {next(iter(args), "value"): result.get("value", next(iter(args.values()), None))}
        self.desk = collect(self.desk, name, args)
        return RecordedCall(name, dict(args), "ok", {"received": True})

    def _validate(
        self, name: str, validator: Callable[..., Any], args: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Run a parameter's validator like any tool entry: arguments checked, failures contained."""
        problem = self.arguments.problem(name, args)
        if problem is not None:
            return problem
        try:
            result = validator(**args)
        except Exception as exc:
            logger.exception(f"validator {name} raised; the value is not taken")
            self.turn.events.append(DebugEntry("tool_exception", len(self.turns), {"tool": name}))
            return {"error": True, "error_code": "tool_exception", "exception": type(exc).__name__}
        if not isinstance(result, Mapping):
            return {"error": True, "error_code": "bad_result", "tool": name}
        return dict(cast(Mapping[str, Any], result))

    def _scope(self) -> str:
        """The call's identity, which every idempotency key of the call includes."""
        checkpointer = self.checkpointer
        if checkpointer is not None:
            return checkpointer.identity.scope
        return "/".join(quote(p, safe="") for p in ("", self.agent.name, self.call_id))


def transaction_summary(session: StewardSession) -> dict[str, Any] | None:
    """The transaction a trace or an event reports: the active one, else the last.

    None when the session has no transactions (not a transaction desk's session).
    """
    if not isinstance(session, TransactionSession):
        return None
    state = session.tstate
    txn = state.active_transaction or state.last_transaction
    both = {
        "active_transaction": _txn_summary(state.active_transaction),
        "last_transaction": _txn_summary(state.last_transaction),
        "sequence": state.sequence,
    }
    if txn is None:
        return {
            "status": str(state.transaction_status),
            "intent": None,
            "missing": [],
            "arguments": {},
            **both,
        }
    return {
        "intent": txn.intent,
        "status": str(state.transaction_status),
        "missing": list(state.missing_parameters),
        "arguments": dict(txn.arguments),
        "idempotency_key": txn.idempotency_key,
        "interrupted": [t.intent for t in state.interrupted],
        **both,
    }


def _txn_summary(txn: Transaction | None) -> dict[str, Any] | None:
    """One transaction in a trace: which, its sequence number, status and arguments."""
    if txn is None:
        return None
    return {
        "intent": txn.intent,
        "sequence": txn.sequence,
        "status": str(txn.status),
        "arguments": dict(txn.arguments),
        "idempotency_key": txn.idempotency_key,
    }
