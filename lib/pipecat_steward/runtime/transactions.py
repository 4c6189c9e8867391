"""``TransactionSession``: seed 004's multi-turn transactions driven through the same seam.

An agent with ``intents:`` in its agent.yaml gets this session instead of the plain one. The
LLM sees the transaction vocabulary (``start_<intent>``, the active intent's setters,
``cancel_transaction``, and while confirming ``confirm/reject/correct_transaction``); its calls
in a turn are routed together by the pure routing precedence of ``core.transactions``; the
confirmation question is spoken by code; a pure affirmative confirms with no LLM call; the
idempotency key is checkpointed before the executor runs; outcomes are reported once.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast
from urllib.parse import quote

from loguru import logger

from pipecat_steward.agent.config import IntentConfig
from pipecat_steward.agent.loader import Agent, validated_list
from pipecat_steward.core.slots import Action, DebugEntry, ToolCall
from pipecat_steward.core.slots.affirm import is_affirmation, is_affirmative
from pipecat_steward.core.slots.prompt import SENTINEL
from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.transactions import (
    CANCEL_TOOL,
    CONFIRM_TOOL,
    CORRECT_TOOL,
    REJECT_TOOL,
    Catalog,
    ConfirmedByCode,
    ToolUse,
    TransactionState,
    TransactionStatus,
    TurnInputs,
    apply,
    apply_confirmation,
    confirmation_gate,
    confirmation_text,
    diagnose,
    mark_reported,
    pending_execution,
    pre_validation_call,
    record_pre_validation,
    record_pre_validation_failure,
    record_result,
    reset_inconsistent,
    resumable,
    resume,
    route_confirmation,
    route_turn,
    start,
    unreported_outcome,
    visible_tools,
)
from pipecat_steward.runtime.checkpoint_schema import payload_problem
from pipecat_steward.runtime.records import Call, TurnRecord
from pipecat_steward.runtime.session import StewardSession

__all__ = ["IntentConfig", "TransactionSession", "ToolSpec", "idempotent", "load_intents"]

S = TransactionStatus
ToolSpec = tuple[str, dict[str, Any], list[str]]
"""A tool's description, JSON-schema properties and required names."""
_PRE, _EXEC = "__pre_validation__", "__transaction__"


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
    """Validate ``intents:``; errors name the path."""
    return validated_list(IntentConfig, raw, "intents")


def _utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class TransactionSession(StewardSession):
    """A session whose control flow is seed 004's transaction runtime."""

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
        self.catalog = Catalog.of([i.spec() for i in self.intents.values()])
        self.tstate = TransactionState()
        self.clock = clock or _utc_now
        self._calls: list[ToolUse] = []
        self._text = ""
        self._pending_events: list[DebugEntry] = []
        self._announce = ""
        self._topic: str | None = None
        self._offer: dict[str, Any] | None = None  # what a "yes" next turn takes up
        self._lead = ""  # spoken before the next message of this cascade

    # -- the seam's interface ---------------------------------------------------------------

    def decide(
        self, user_text: str = "", *, first_turn: bool = False, speculative: bool = False
    ) -> Action:
        """Route the turn and say what happens next (a speculative call changes nothing)."""
        if self.conflict is not None:
            return super().decide(user_text, first_turn=first_turn, speculative=speculative)
        if speculative:
            return self._llm(self._directive_text())
        user_text = user_text.strip()
        if not user_text and self.opens_turn(user_text):
            self.heard = ""
            self.turns.append(TurnRecord(""))  # a blank caller turn is a turn of its own
        if user_text:
            action = self._caller_turn(user_text)
        elif self._calls:
            action = self._route_calls()
        else:
            action = self._next()
        self._sync_topic()
        self.handed(action)
        self.turn.actions.append(action)
        self.turn.events.extend(action.events)
        return action

    def tool_call(self, name: str, args: Mapping[str, Any]) -> Call:
        """Collect a transaction tool the LLM called; the turn's calls are routed together."""
        if self.conflict is not None:
            return super().tool_call(name, args)
        if name not in visible_tools(self.catalog, self.tstate):
            reply = {
                "error": True,
                "error_code": "not_available",
                "directive": self._directive_text(),
            }
            call = Call(name, dict(args), "refused", reply)
        else:
            call = self._collect(name, args)
        self.turn.llm_calls.append(self.recorded(call))
        return call

    async def run_call(self, call: ToolCall) -> Call:
        """Run pre-validation or the transaction's executor, checkpointing around it."""
        if call.task not in (_PRE, _EXEC):
            return await super().run_call(call)
        await self.save()  # the idempotency key is durable before the executor acts
        if self.conflict is not None:  # another worker owns the call now: it runs the executor
            return await super().run_call(call)
        result = await self._invoke(call.name, call.args)
        ok = bool(result.get("success", not result.get("error")))
        if call.task == _PRE:
            self._pre_validated(result, ok)
        else:
            key = str(call.args.get("idempotency_key"))
            self.tstate = record_result(self.tstate, key=key, ok=ok, result=result, at=self.clock())
        done = Call(call.name, dict(call.args), "ok" if ok else "error", result)
        self.turn.fired.append(self.recorded(done))
        await self.save()
        return done

    def _pre_validated(self, result: dict[str, Any], ok: bool) -> None:
        """Record the check: eligible, out of scope, or FAILED when the check itself failed."""
        txn, at = self.tstate.active_transaction, self.clock()
        if txn is None:
            return
        intent = self.intents[txn.intent]
        if not ok:  # a backend error says nothing about eligibility: never "out of scope"
            self.tstate = record_pre_validation_failure(self.tstate, result=result, at=at)
            self._announce = render(intent.check_failed_say, {**txn.arguments})
            self._offer = {"kind": "retry", "intent": txn.intent, "arguments": dict(txn.arguments)}
            self._log("transaction_check_failed", intent=txn.intent)
            return
        eligible = bool(result.get("eligible", True))
        self.tstate = record_pre_validation(self.tstate, eligible=eligible, result=result, at=at)
        if not eligible:
            self._announce = render(intent.out_of_scope_say, {**txn.arguments, **result})

    def tool_specs(self) -> dict[str, ToolSpec]:
        """Schemas of the transaction tools, for the model."""
        specs: dict[str, ToolSpec] = {}
        for intent in self.intents.values():
            params = {p: {"type": "string"} for p in intent.required}
            quote = {"quote": {"type": "string", "description": "the caller's words asking for it"}}
            specs[f"start_{intent.name}"] = (
                f"Start: {intent.description or intent.name}. Pass any parameters the caller already gave.",
                {**params, **quote},
                [],
            )
            for param in intent.required:
                specs[f"set_{param}"] = (
                    f"Record the {param.replace('_', ' ')} exactly as the caller gave it.",
                    {param: {"type": "string"}},
                    [param],
                )
        specs[CANCEL_TOOL] = ("The caller abandons the current request.", {}, [])
        specs[CONFIRM_TOOL] = ("The caller agreed to the confirmation question.", {}, [])
        specs[REJECT_TOOL] = ("The caller declined the confirmation question.", {}, [])
        specs[CORRECT_TOOL] = (
            "The caller changed a value while confirming.",
            {"parameter": {"type": "string"}, "value": {"type": "string"}},
            ["parameter", "value"],
        )
        return specs

    def payload(self) -> dict[str, Any]:
        return {
            **super().payload(),
            "transactions": self.tstate.to_json(),
            "topic": self._topic,
            "offer": self._offer,
        }

    def payload_problem(self, data: Mapping[str, Any]) -> str | None:
        return payload_problem(data, transactions=True)

    def load_payload(self, data: Mapping[str, Any]) -> None:
        super().load_payload(data)
        if "transactions" in data:
            self.tstate = TransactionState.from_json(str(data["transactions"]))
        topic = data.get("topic")
        self._topic = str(topic) if topic else None
        offer = data.get("offer")
        self._offer = dict(offer) if isinstance(offer, Mapping) else None

    def _sync_topic(self) -> None:
        """Entering an intent arms its topic's procedure; leaving it disarms (DESIGN §5)."""
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

    # -- turns ------------------------------------------------------------------------------

    def _caller_turn(self, text: str) -> Action:
        self.turns.append(TurnRecord(text))
        self._calls, self._text = [], text
        problem = diagnose(self.tstate)
        if problem is not None:
            self._log("transaction_diagnosis", code=str(problem.code), message=problem.message)
            self.tstate = reset_inconsistent(self.tstate, at=self.clock())
        offer, self._offer = self._offer, None
        txn = self.tstate.active_transaction
        if offer is not None and txn is None and is_affirmative(text):
            self._take(offer)
            return self._next()
        if txn is not None and txn.status == S.AWAITING_CONFIRMATION:
            gate = confirmation_gate(self.tstate, text)
            if not isinstance(gate, ConfirmedByCode):
                return self._llm(self._directive_text())  # only confirm/reject/correct visible
            self._log("transaction_confirmed", by="code")
            self.tstate = apply_confirmation(
                self.catalog, self.tstate, gate, scope=self._scope(), at=self.clock()
            )
        return self._next()

    def _route_calls(self) -> Action:
        calls, self._calls = self._calls, []
        txn = was = self.tstate.active_transaction
        if txn is not None and txn.status == S.AWAITING_CONFIRMATION:
            decision = route_confirmation(self.catalog, self.tstate, calls)
            self.tstate = apply_confirmation(
                self.catalog, self.tstate, decision, scope=self._scope(), at=self.clock()
            )
        else:
            decision = route_turn(self.catalog, self.tstate, TurnInputs(calls, {}, self._text))
            self.tstate = apply(self.catalog, self.tstate, decision, at=self.clock())
        self._log("transaction_route", decision=type(decision).__name__)
        if was is not None and self.tstate.active_transaction is None:
            return self._after_outcome("")  # a detour cancelled: bring the set-aside one back
        return self._next()

    def _take(self, offer: Mapping[str, Any]) -> None:
        """The caller said yes to an offer: resume the set-aside transaction, or retry."""
        intent, at = str(offer["intent"]), self.clock()
        if offer.get("kind") == "resume" and any(
            t.intent == intent for t in self.tstate.interrupted
        ):
            self.tstate = resume(self.catalog, self.tstate, intent, at=at)
        elif offer.get("kind") == "retry":
            self.tstate = start(self.catalog, self.tstate, intent, offer.get("arguments"), at=at)
        self._log("transaction_offer_taken", kind=str(offer.get("kind")), intent=intent)

    def _next(self) -> Action:
        """What the current transaction status asks for."""
        if self._announce:
            text, self._announce = self._announce, ""
            return self._after_outcome(text)
        told = unreported_outcome(self.tstate)
        if told is not None:
            self.tstate = mark_reported(self.tstate)
            return self._after_outcome(self._outcome_text(told))
        if (pre := pre_validation_call(self.catalog, self.tstate)) is not None:
            return self._run(ToolCall(pre.tool, dict(pre.arguments), "executor", _PRE))
        if (run := pending_execution(self.catalog, self.tstate)) is not None:
            args = {**run.arguments, "idempotency_key": run.idempotency_key}
            return self._run(ToolCall(run.tool, args, "executor", _EXEC))
        txn = self.tstate.active_transaction
        if txn is not None and txn.status == S.AWAITING_CONFIRMATION:
            return self._say(confirmation_text(self.catalog, self.tstate), phase="readback")
        return self._llm(self._directive_text())

    def _after_outcome(self, text: str) -> Action:
        """Say an outcome; when a detour just ended, bring the set-aside transaction back.

        One set aside while confirming is resumed at once (its confirmation is asked again,
        after a fresh pre-validation where the intent has one); one set aside while collecting
        is offered, and a "yes" resumes it.
        """
        back = resumable(self.tstate)
        if back is None or self.tstate.active_transaction is not None:
            return self._say(text, phase="terminal") if text else self._next()
        if back.status in (S.AWAITING_CONFIRMATION, S.PRE_VALIDATION):
            self.tstate = resume(self.catalog, self.tstate, back.intent, at=self.clock())
            self._log("transaction_resumed", intent=back.intent)
            self._lead = f"{text} Now, back to your earlier request.".strip()
            return self._next()
        if self._offer is None:  # a retry offer already ends the text; one question at a time
            intent = self.intents[back.intent]
            values = {"intent": intent.description or intent.name, **back.arguments}
            text = f"{text} {render(intent.resume_say, values)}".strip()
            self._offer = {"kind": "resume", "intent": back.intent}
        return self._say(text, phase="terminal")

    def _outcome_text(self, txn: Any) -> str:
        intent = self.intents[txn.intent]
        values = {**txn.arguments, **(txn.evidence.result or {})}
        template = {S.COMPLETED: intent.done_say, S.OUT_OF_SCOPE: intent.out_of_scope_say}.get(
            txn.status, intent.failed_say
        )
        return render(template, values)

    def _directive_text(self) -> str:
        txn = self.tstate.active_transaction
        if txn is None:
            names = ", ".join(i.description or i.name for i in self.intents.values())
            return f"How can I help you today? I can {names}."
        if txn.status == S.AWAITING_CONFIRMATION:
            return f"The caller must answer: {confirmation_text(self.catalog, self.tstate)}"
        missing = [p for p in txn.required if p not in txn.arguments]
        intent = self.intents[txn.intent]
        return " ".join(
            intent.ask.get(p, f"What is the {p.replace('_', ' ')}?") for p in missing[:1]
        )

    # -- actions ----------------------------------------------------------------------------

    def _visible(self) -> frozenset[str]:
        return frozenset(visible_tools(self.catalog, self.tstate))

    def _llm(self, directive: str) -> Action:
        visible = self._visible()
        suffix = f"{SENTINEL}\n<transaction_protocol>\nCall the tools to record what the caller says; code decides what happens next.\n</transaction_protocol>\n<system_directive>\n{directive}\n</system_directive>"
        return Action(
            phase="collection",
            status="in_progress",
            visible_tools=visible,
            directive=directive,
            suffix=suffix,
            events=self._events(),
        )

    def _say(self, text: str, *, phase: Any) -> Action:
        if self._lead:
            text, self._lead = f"{self._lead} {text}", ""
        return Action(
            phase=phase,
            status="in_progress",
            visible_tools=self._visible(),
            directive=text,
            preempt=True,
            force_preempt=True,
            message=text,
            events=self._events(),
        )

    def _run(self, call: ToolCall) -> Action:
        lead, self._lead = self._lead, ""  # spoken once the call ran, before what follows
        return Action(
            phase="collection",
            status="in_progress",
            preempt=True,
            force_preempt=True,
            message=lead,
            calls=(call,),
            events=self._events(),
        )

    def _collect(self, name: str, args: Mapping[str, Any]) -> Call:
        if name == CONFIRM_TOOL and not self._plain_yes():
            reply = {
                "error": True,
                "error_code": "not_confirmed",
                "directive": "The caller has not said a plain yes, so nothing is confirmed. "
                + self._directive_text(),
            }
            return Call(name, dict(args), "refused", reply)
        validator = self.agent.tools.get(name)
        if validator is not None and name.startswith("set_"):
            result = self._validate(name, validator, args)
            if result.get("error"):
                return Call(name, dict(args), "error", result)
            args = {next(iter(args), "value"): result.get("value", next(iter(args.values()), None))}
        self._calls.append(ToolUse(name, dict(args)))
        return Call(name, dict(args), "ok", {"received": True})

    def _plain_yes(self) -> bool:
        """Whether the caller's words this turn confirm the pending transaction by the code rule.

        A transaction acts on the caller's yes, never on the model's reading of other words:
        "no", "next week" or "yes, and PED-1003" leave it waiting for a plain answer.
        """
        txn = self.tstate.active_transaction
        pending = list(txn.arguments.values()) if txn is not None else []
        return is_affirmation(self.heard, pending)

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

    def _log(self, tag: str, **data: object) -> None:
        self._pending_events.append(DebugEntry(tag, len(self.turns), data))

    def _events(self) -> tuple[DebugEntry, ...]:
        events, self._pending_events = tuple(self._pending_events), []
        return events
