"""Replaying SGD dialogues through the slot-filling engine.

Each dialogue gets one ``Conversation`` per service (SGD keeps one state per service frame).
Per user turn and frame, the gold values newly entering the state go to the service's setter
in one call, a changed value goes to ``correct_slot``, and a new active intent fills or corrects
the ``intent`` slot; these are the scripted LLM's tool calls of that turn. Executors are fakes
that succeed and record their arguments. After the turn the engine's state is compared with the
gold state, and the gold service calls of the next system turn with what the engine fired.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipecat_steward.core.slots import CompiledFlow
from pipecat_steward.core.slots.content import spoken_form
from pipecat_steward.replay.metrics import Metrics
from pipecat_steward.replay.sgd_data import (
    NO_INTENT,
    Dialogue,
    GoldCall,
    GoldFrame,
    GoldTurn,
    load_dialogues,
    load_schema,
)
from pipecat_steward.replay.sgd_flow import ReplayNames, compile_service, replay_names
from pipecat_steward.replay.sgd_format import unknown_services
from pipecat_steward.runtime.conversation import Conversation, Inference, RecordedCall

__all__ = ["Replayer", "replay_split"]

_DONTCARE = "dontcare"
_AFFIRM = "AFFIRM"


@dataclass
class _Session:
    """One service frame's engine session inside one dialogue."""

    flow: CompiledFlow
    names: ReplayNames
    conversation: Conversation = field(init=False)
    fed: dict[str, str] = field(default_factory=lambda: {})
    executed: dict[str, Mapping[str, Any]] = field(default_factory=lambda: {})
    confirmed: dict[str, str] = field(default_factory=lambda: {})
    """Transactional intent → the confirmation fed last (``yes``/``no``)."""
    fired_at: dict[str, int] = field(default_factory=lambda: {})
    turn: int = 0
    """The gold turn being played: a backend call fires in it."""

    def __post_init__(self) -> None:
        tools = {t.config.tool: self._backend(t.config.tool) for t in self.flow.tasks}
        self.conversation = Conversation(self.flow, tools)

    def _backend(self, tool: str) -> Callable[..., Awaitable[dict[str, Any]]]:
        """The stand-in backend of ``tool``: it succeeds, noting the arguments it was sent.

        Noted as the backend receives them: the turn record keeps its arguments redacted, as
        every record does, and a value or a slot name that looks like a secret to redaction
        ("Pin4_Slot") is still an argument to compare with the gold call.
        """

        # A coroutine: the runtime runs a synchronous function in a thread (so a blocking
        # backend never stalls the call), which this stand-in, answering at once, does not need.
        async def succeed(**args: Any) -> dict[str, Any]:
            self.executed[tool] = args
            self.fired_at[tool] = self.turn
            return {"success": True}

        return succeed


class Replayer:
    """Replays dialogues of one schema, accumulating ``Metrics``."""

    def __init__(self, schema: Mapping[str, Mapping[str, Any]]) -> None:
        self.schema = schema
        self.flows = {name: compile_service(s) for name, s in schema.items()}
        self.names = {name: replay_names(s) for name, s in schema.items()}
        self.metrics = Metrics()

    def _session(self, service: str) -> _Session:
        return _Session(self.flows[service], self.names[service])

    def _frame_session(self, sessions: dict[str, _Session], frame: GoldFrame) -> _Session:
        """The frame's session; a fresh one when the gold state dropped values.

        SGD's state only loses values when a new frame of the service starts (the caller makes
        a second payment, or a new intent that keeps none of the old values), so that is a new
        intent instance with an empty state, not lost state.
        """
        session = sessions.get(frame.service)
        if session is not None and session.fed.keys() - frame.values.keys() - session.names.slots:
            self.metrics.fresh_frames += 1
            session = None
        if session is None:
            session = sessions[frame.service] = self._session(frame.service)
        return session

    def replay(self, dialogue: Dialogue) -> None:
        """Replay one dialogue turn by turn (``SgdFormatError``: a service the schema lacks)."""
        used = [f.service for t in dialogue.turns for f in t.frames]
        used += [c.service for t in dialogue.turns for c in t.calls]
        problem = unknown_services(dialogue.dialogue_id, used, self.schema)
        if problem is not None:
            raise problem
        self.metrics.dialogues += 1
        self.metrics.multi_valued += dialogue.multi_valued
        sessions: dict[str, _Session] = {}
        for turn in dialogue.turns:
            self.metrics.user_turns += 1
            for frame in turn.frames:
                self._play(dialogue.dialogue_id, turn, frame, self._frame_session(sessions, frame))
            for call in turn.calls:
                self._check_call(dialogue.dialogue_id, turn.index, call, sessions.get(call.service))

    def _play(self, dialogue_id: str, turn: GoldTurn, frame: GoldFrame, session: _Session) -> None:
        calls = self._plan(frame, session)
        session.turn = turn.index
        said = _bot_words(turn)
        if said:  # a yes accepts what the bot offered in them
            session.conversation.session.spoke(said, "llm")
        record = session.conversation.turn(
            turn.utterance, [Inference(calls=calls)] if calls else []
        )
        for made in record.llm_calls:
            if made.outcome != "ok":
                self.metrics.rejected_calls += 1
                self.metrics.miss(f"call_{made.outcome}:{made.name}", dialogue_id)
        if frame.intent != NO_INTENT:
            self._check_state(dialogue_id, frame, session)

    def _plan(self, frame: GoldFrame, session: _Session) -> list[RecordedCall]:
        """The scripted LLM's calls: one setter call for new values, a correction per change."""
        intent_slot = session.names.intent
        wanted = dict(frame.values)
        if frame.intent != NO_INTENT:
            wanted[intent_slot] = frame.intent
        new: dict[str, str] = {}
        calls: list[RecordedCall] = []
        for slot, value in wanted.items():
            if slot not in session.fed:
                new[slot] = value
            elif session.fed[slot] != value:
                calls.append(RecordedCall("correct_slot", {"slot": slot, "value": value}))
                self._count_change(slot == intent_slot)
        session.fed.update(wanted)
        calls = [RecordedCall(session.names.setter, new), *calls] if new else calls
        return [*calls, *self._confirmations(frame, session, changed=bool(new) or bool(calls))]

    def _confirmations(
        self, frame: GoldFrame, session: _Session, changed: bool
    ) -> list[RecordedCall]:
        """Feed the caller's confirmation: ``yes`` on AFFIRM, ``no`` again after a change.

        A confirmation holds for the values it was given on: any new or changed value (or
        another intent) withdraws every confirmation, and the caller's next AFFIRM of the
        active transactional intent gives it again.
        """
        calls: list[RecordedCall] = []
        for intent, slot in session.names.confirm.items():
            was = session.confirmed.get(intent)
            now = "no" if changed and was == "yes" else was
            if intent == frame.intent and _AFFIRM in frame.acts:
                now = "yes"
            if now is None or now == was:
                continue
            session.confirmed[intent] = now
            calls.append(
                RecordedCall(session.names.setter, {slot: now})
                if was is None
                else RecordedCall("correct_slot", {"slot": slot, "value": now})
            )
        return calls

    def _count_change(self, is_intent: bool) -> None:
        if is_intent:
            self.metrics.intent_switches += 1
        else:
            self.metrics.corrections += 1

    def _check_state(self, dialogue_id: str, frame: GoldFrame, session: _Session) -> None:
        m = self.metrics
        m.state_frames += 1
        state = session.conversation.state
        engine = {
            n: r.value for n, r in state.slots.items() if r.settled and n not in session.names.slots
        }
        if engine.keys() != frame.values.keys():
            m.miss("state_slots_differ", dialogue_id)
        elif any(str(v) not in frame.accepted[n] for n, v in engine.items()):
            m.miss("state_value_differs", dialogue_id)
        else:
            m.state_matches += 1
        intent = self.schema[frame.service]["intents"]
        required = next((i["required_slots"] for i in intent if i["name"] == frame.intent), [])
        gold_ready = all(s in frame.values for s in required) and (
            frame.intent not in session.names.confirm
            or session.confirmed.get(frame.intent) == "yes"
        )
        engine_ready = frame.intent in state.succeeded
        if gold_ready == engine_ready:
            m.completion_matches += 1
        else:
            m.miss(
                "completion_engine_early" if engine_ready else "completion_engine_late", dialogue_id
            )

    def _check_call(
        self, dialogue_id: str, index: int, call: GoldCall, session: _Session | None
    ) -> None:
        m = self.metrics
        m.calls += 1
        if session is None:
            m.miss("call_without_session", dialogue_id)
            return
        kind = "transactional" if self._transactional(call) else "search"
        tool = session.names.tools.get(call.method, "")  # "": the service has no such intent
        m.call_matches += self._agrees(
            call.method in session.conversation.state.succeeded, "call_task_not_fired", dialogue_id
        )
        m.call_turn_matches += self._agrees(
            session.fired_at.get(tool) == index, f"call_fired_earlier:{kind}", dialogue_id
        )
        mismatch = _argument_mismatch(session.flow, call, session.executed.get(tool))
        m.argument_matches += self._agrees(mismatch is None, f"{mismatch}:{kind}", dialogue_id)

    def _agrees(self, ok: bool, kind: str, dialogue_id: str) -> bool:
        if not ok:
            self.metrics.miss(kind, dialogue_id)
        return ok

    def _transactional(self, call: GoldCall) -> bool:
        intents = self.schema[call.service]["intents"]
        return any(i["name"] == call.method and i.get("is_transactional") for i in intents)


def _bot_words(turn: GoldTurn) -> str:
    """What the bot said before the caller's turn, with the intents it offered named.

    The system's words, then the intents its acts offered in the words that name them. The
    system describes an intent ("Shall I book it?") rather than naming it, so its words alone
    would let a yes to the offer change the intent only when they happen to share a word with
    the intent's name.
    """
    return " ".join([turn.offered, *(spoken_form(i) for i in turn.offered_intents)]).strip()


def _argument_mismatch(
    flow: CompiledFlow, call: GoldCall, args: Mapping[str, Any] | None
) -> str | None:
    """Return the mismatch class of the engine's latest arguments for ``call`` (None: equal)."""
    if args is None:
        return "args_never_fired"
    for name, value in args.items():
        gold = call.parameters.get(name)
        default = flow.slot[name].config.default
        if (gold is None and value in (default, _DONTCARE)) or (
            gold is not None and str(value) == gold
        ):
            continue
        return "args_optional_filled_after_fire" if value == default else "args_value_differs"
    return None


def replay_split(
    split_dir: str | os.PathLike[str], dialogues: Iterable[Dialogue] | None = None
) -> dict[str, Any]:
    """Replay every dialogue of an SGD split folder and return the report.

    Reading and parsing the JSON is timed apart from the replay, so the report can give the
    replay's rate and its cost relative to parsing (a ratio from one run, whatever the machine).

    Args:
        split_dir: A folder with ``schema.json[.gz]`` and ``dialogues_*.json[.gz]``.
        dialogues: Replay these instead of the folder's dialogue files.
    """
    split_dir = Path(split_dir)
    start = time.perf_counter()
    replayer = Replayer(load_schema(split_dir))
    source = _Timed(dialogues if dialogues is not None else load_dialogues(split_dir))
    for dialogue in source:
        replayer.replay(dialogue)
    m = replayer.metrics
    m.seconds = time.perf_counter() - start
    m.parse_seconds = source.seconds
    return m.report()


class _Timed:
    """Iterate ``items``, adding up the time spent producing them."""

    def __init__(self, items: Iterable[Dialogue]) -> None:
        self.items = iter(items)
        self.seconds = 0.0

    def __iter__(self) -> _Timed:
        return self

    def __next__(self) -> Dialogue:
        start = time.perf_counter()
        try:
            return next(self.items)
        finally:
            self.seconds += time.perf_counter() - start
