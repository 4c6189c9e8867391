"""``Turn``: the working state of one engine invocation and the helpers its stages share.

A ``Turn`` owns a private copy of the session state; stages change it and collect messages,
hints and debug entries. ``finish`` turns the collected pieces into the final ``Action``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipecat_steward.core.slots import prompt
from pipecat_steward.core.slots.action import Action, Chooser, DebugEntry, Hint, Phase, ToolCall
from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.slots.config import ResponsePart
from pipecat_steward.core.slots.dag import Announce, Decision, decide, has_status
from pipecat_steward.core.slots.merge import put
from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.slots.visibility import visible_tools
from pipecat_steward.core.state import SessionState, SlotRecord

__all__ = ["Draft", "Turn"]


class Draft:
    """What a stage decided, before ``Turn.finish`` completes it into the final ``Action``.

    A plain mutable record rather than an ``Action``: building the frozen sixteen-field
    ``Action`` twice per invocation cost more than any stage.
    """

    __slots__ = ("calls", "decision", "directive", "force_preempt", "message", "phase", "preempt")

    def __init__(
        self,
        phase: Phase,
        decision: Decision | None = None,
        directive: str = "",
        *,
        preempt: bool = False,
        force_preempt: bool = False,
        message: str = "",
        calls: tuple[ToolCall, ...] = (),
    ) -> None:
        self.phase: Phase = phase
        self.decision = decision
        self.directive = directive
        self.preempt = preempt
        self.force_preempt = force_preempt
        self.message = message
        self.calls = calls


@dataclass(slots=True, eq=False)
class Turn:
    """One invocation in progress. Stages read and change ``state`` and the collectors."""

    flow: CompiledFlow
    state: SessionState
    user_text: str
    rng: Chooser | None
    first_turn: bool
    events: list[DebugEntry] = field(default_factory=lambda: [])
    hints: list[Hint] = field(default_factory=lambda: [])
    announce_messages: list[str] = field(default_factory=lambda: [])
    announce_force: bool = False
    task_message: str = ""
    response: list[ResponsePart] = field(default_factory=lambda: [])
    fresh_deferred: list[str] = field(default_factory=lambda: [])
    promoted_now: list[str] = field(default_factory=lambda: [])
    asks: tuple[str, ...] = ()
    readback_transition: bool = False
    yielded: bool = False

    def begin(self) -> None:
        """Count the invocation and, for a caller turn, the turn and the steer-back counter."""
        state = self.state
        state.invocation += 1
        self.readback_transition = state.readback_transition
        state.readback_transition = False
        if not self.user_text:
            return
        state.turn += 1
        if state.hard_steer_yielded:
            state.hard_steer_yielded = False
            self.yielded = True
        elif state.turn > 1:  # the greeting turn is not a turn without progress
            state.steer_back_turns += 1

    def log(self, tag: str, **data: object) -> None:
        """Record a debug entry under ``tag`` (what happened)."""
        self.events.append(DebugEntry(tag, self.state.invocation, data))

    # -- text ---------------------------------------------------------------------------

    def ask_directive(self, names: Sequence[str]) -> str:
        return prompt.ask_text(self.flow, self.state, names)

    def readback(self, names: Sequence[str]) -> str:
        return prompt.readback_text(self.flow, self.state, names)

    def scope_hint(self, names: Sequence[str]) -> Hint:
        return prompt.readback_scope(self.flow, self.state, names)

    def joined_messages(self) -> str:
        return " ".join([m for m in [*self.announce_messages, self.task_message] if m]).strip()

    def transition_prefix(self) -> str:
        prefixes = list(self.flow.config.confirm_transition_prefix)
        if not prefixes:
            return ""
        return self.rng.choice(prefixes) if self.rng is not None else prefixes[0]

    def ask_response(self, names: Sequence[str]) -> None:
        for name in names:
            cfg = self.flow.slot[name].config
            if not (cfg.response or cfg.channel_responses):
                continue  # resolve_response would return ()
            self.response.extend(
                prompt.resolve_response(self.state, cfg.response, cfg.channel_responses)
            )

    # -- the announce cascade -----------------------------------------------------------

    def announce_cascade(self) -> Decision:
        """Fill consecutive announce slots, collecting their messages, until another decision."""
        decision = decide(self.flow, self.state)
        while isinstance(decision, Announce):
            cfg = self.flow.slot[decision.slot].config
            put(
                self.state,
                decision.slot,
                SlotRecord("filled", True, None, "announce", self.state.turn),
            )
            self.announce_messages.append(render(cfg.message, self.state.variables))
            self.announce_force = self.announce_force or cfg.preempt
            self.response.extend(
                prompt.resolve_response(self.state, cfg.response, cfg.channel_responses)
            )
            self.log("announce", slot=decision.slot)
            decision = decide(self.flow, self.state)
        return decision

    # -- actions ------------------------------------------------------------------------

    def llm_action(
        self, decision: Decision | None, directive: str, phase: Phase = "collection"
    ) -> Draft:
        """The LLM runs, guided by ``directive``."""
        return Draft(phase, decision, directive)

    def preempt_action(
        self,
        decision: Decision | None,
        message: str,
        *,
        calls: tuple[ToolCall, ...] = (),
        force: bool = False,
        phase: Phase = "collection",
    ) -> Draft:
        """Skip the LLM and speak ``message`` verbatim (after running ``calls``)."""
        return Draft(
            phase,
            decision,
            message,
            preempt=True,
            force_preempt=force,
            message=message,
            calls=calls,
        )

    def finish(self, action: Draft) -> Action:
        """Complete ``action``: visibility, hints, suffix, payload routing and bookkeeping."""
        state = self.state
        fresh = action.phase == "readback" and not state.had_pending
        visible = visible_tools(self.flow, state, fresh)
        _, hidden, ordered = prompt.visible_derived(self.flow, visible)
        preempt = action.preempt and (not self.first_turn or action.force_preempt)
        hints = self._hints(action, preempt)
        response = self._route_payloads(preempt)
        suffix = prompt.build_suffix(self.flow, action.phase, action.directive, hints, visible)
        self._close(action, ordered, preempt)
        # Positional, in field order: a frozen dataclass builds ~1 us faster without keywords.
        return Action(
            action.phase,  # phase
            state.status,  # status
            action.decision,  # decision
            visible,  # visible_tools
            hidden,  # hidden_tools
            action.directive,  # directive
            tuple(hints),  # hints
            suffix,  # suffix
            preempt,  # preempt
            action.force_preempt,  # force_preempt
            action.message if preempt else "",  # message
            response,  # response
            action.calls,  # calls
            self.asks,  # asks
            tuple(self.events),  # events
        )

    def _hints(self, action: Draft, preempt: bool) -> list[Hint]:
        hints = list(self.hints)
        if action.phase == "terminal" or preempt:
            return hints
        if self.fresh_deferred and not has_status(self.state, "pending"):
            hints.append(prompt.deferred_hint(self.fresh_deferred, action.directive))
        self._gate_context(hints)
        self._inferred(hints)
        return hints

    def _gate_context(self, hints: list[Hint]) -> None:
        state = self.state
        gate = self.flow.config.gate_slot
        if (
            gate
            and state.gate_user_text
            and not state.gate_text_delivered
            and state.record(gate).settled
        ):
            text = f'The caller said earlier: "{state.gate_user_text}". Take any values it contains from there rather than asking again.'
            hints.append(Hint("user_context", text))
            state.gate_text_delivered = True

    def _inferred(self, hints: list[Hint]) -> None:
        names = [n for n, r in self.state.slots.items() if r.status == "inferred" and not r.spoken]
        if not names:
            return
        hints.append(prompt.inferred_hint(self.flow, self.state, names))
        for name in names:
            r = self.state.slots[name]
            put(
                self.state,
                name,
                SlotRecord(r.status, r.value, r.source, r.origin, self.state.turn, True),
            )

    def _route_payloads(self, preempt: bool) -> tuple[ResponsePart, ...]:
        if not self.response:
            return ()
        route = "preempt_dispatch" if preempt else "stash"
        self.log("payload_route", path=route, count=len(self.response))
        if preempt:
            return tuple(self.response)
        self.state.pending_payloads.extend(self.response)
        return ()

    def _close(self, action: Draft, visible: tuple[str, ...], preempt: bool) -> None:
        state = self.state
        # One pass over the records for the bookkeeping and the debug entry.
        filled: list[str] = []
        pending: list[str] = []
        deferred: list[str] = []
        for name, record in state.slots.items():
            status = record.status
            if status == "filled" or status == "inferred":
                filled.append(name)
            elif status == "pending":
                pending.append(name)
            elif status == "deferred":
                deferred.append(name)
        # Pending values count as read back only when this action presented the readback
        # (an error preempt or a fired task says something else): auto-confirm needs it heard.
        state.had_pending = bool(pending) and action.phase == "readback"
        state.fresh_deferred = list(self.fresh_deferred)
        state.seen_revision = state.revision
        if not action.calls:  # what the caller hears next: the question a deflection dodges
            state.last_asks = list(self.asks)
        filled.sort()
        pending.sort()
        deferred.sort()
        # Tuples of strings: the turn records keep one of these per inference for the call's
        # whole life, and the cycle collector stops tracking a tuple (and then the dict) that
        # holds only strings, where it scans a list at every collection.
        data: dict[str, object] = {
            "phase": action.phase,
            "filled": tuple(filled),
            "pending": tuple(pending),
            "deferred": tuple(deferred),
            "visible": visible,  # sorted
            "asking": tuple(self.asks),
            "fired": tuple(c.name for c in action.calls),
            "preempted": preempt,
        }
        self.events.append(DebugEntry("invoke", state.invocation, data))
