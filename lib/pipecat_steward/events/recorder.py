"""``SessionRecorder``: turn what a session recorded into conversation events.

The session already keeps what happened (turn records: the engine's actions, the model's and the
engine's calls, what the bot said, gate decisions, payloads, debug entries; the slot records;
the checklist; the transaction; the checkpoint version). The recorder reads what is new since
its last ``sync`` and emits it, so every path that drives a session (cascaded hook, speech to
speech, direct driver, ``steward simulate``) yields the same events without its own copy of
the emitting code. ``sync`` is cheap and idempotent: call it whenever something may have
happened (every relay event, the end of a turn, the end of the call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from loguru import logger

from pipecat_steward.core.sameness import same_value
from pipecat_steward.events.publisher import EventPublisher
from pipecat_steward.events.schema import (
    BotUtteranceEvent,
    CallerTranscript,
    ChecklistStatus,
    CheckpointEvent,
    CorrectionEvent,
    DebugEvent,
    EngineDecision,
    GateDecision,
    PayloadEvent,
    SlotChange,
    ToolCallEvent,
    ToolResultEvent,
    TransactionEvent,
    TurnEnded,
)
from pipecat_steward.runtime.records import RecordedCall, TurnRecord, trace_value
from pipecat_steward.runtime.transactions import transaction_summary

if TYPE_CHECKING:
    from pipecat_steward.core.state import SlotRecord
    from pipecat_steward.runtime.session import StewardSession

__all__ = ["SessionRecorder", "record_session"]

Transaction = Callable[["StewardSession"], dict[str, Any] | None]

_STORE_ROUNDS = 3  # sync-and-store rounds before a checkpoint; more events than that keep coming
STORE_WAIT_S = 2.0
"""How long a checkpoint waits for the event store: one that does not answer holds no call."""


class SessionRecorder:
    """Emits a session's new records as events on ``publisher`` (see the module docstring).

    Args:
        session: The session to read.
        publisher: Where events go (its redaction applies).
        monitor: Returns the procedure monitor when one is attached (its stats, note queue
            and clock are read).
        transaction: Returns the transaction summary the trace shows (None without one).
    """

    def __init__(
        self,
        session: StewardSession,
        publisher: EventPublisher,
        *,
        monitor: Callable[[], Any] = lambda: None,
        transaction: Transaction | None = None,
    ) -> None:
        self.session = session
        self.publisher = publisher
        self.monitor = monitor
        self.transaction = transaction
        self._turns = 0  # records fully or partly emitted
        self._seen: dict[str, int] = {}
        self._slots: dict[str, SlotRecord] = {}  # the record of each slot last reported
        self._checklist: dict[str, Any] = {}
        self._checklist_status: dict[str, Any] | None = None  # the payload last read
        self._txn: dict[str, Any] | None = None
        self._version = 0
        self._conflict = False
        self._monitor: dict[str, int] = {}
        self._queued: tuple[Any, ...] = ()
        self._base: int | None = None
        self._storing: asyncio.Future[None] | None = None  # the last wait for the store

    def sync(self) -> None:
        """Emit everything the session recorded since the last call.

        The first sync must come after the session was restored (before the pipeline runs,
        or as soon as a direct run restored it): a resumed call continues its turn count.
        """
        if self._base is None:
            self._base = self.session.turns_done
        self._records()
        self._slot_changes()
        self._checklists()
        self._transaction()
        self._checkpoint()
        self._corrections()

    async def store_before_checkpoint(self) -> None:
        """Emit what the session recorded and wait until every event emitted is stored.

        The session awaits this before each checkpoint it writes, so a worker killed after a
        checkpoint leaves every event of the progress that checkpoint holds in the store (the
        worker that resumes the call continues from it). Events emitted while the store wrote
        are synced and stored too: nothing awaits between the last check and the checkpoint.

        A store that has not answered within ``STORE_WAIT_S`` holds the checkpoint no longer
        (a warning says so), and the checkpoints after it do not wait while it still has not:
        the call goes on, and its events are stored when the store answers.
        """
        publisher = self.publisher
        if publisher.store is None or publisher.fenced:
            return  # nothing is stored (or no longer by this worker): nothing to wait for
        if self._storing is not None and not self._storing.done():
            return  # the store is still behind from an earlier checkpoint
        for _ in range(_STORE_ROUNDS):
            self.sync()
            emitted = publisher.emitted
            self._storing = asyncio.ensure_future(publisher.flush())
            done, _ = await asyncio.wait({self._storing}, timeout=STORE_WAIT_S)
            if not done:
                logger.warning(
                    f"steward events: the event store did not answer in {STORE_WAIT_S:g} s; "
                    "checkpointing without waiting for it"
                )
                return
            self.sync()
            if publisher.emitted == emitted:
                return

    def end_turn(self, number: int | None = None) -> None:
        """Sync, then mark the caller turn as over.

        Args:
            number: The turn's number as the driver counts it (a scenario's turn); it becomes
                the turn count from here on. Without it the recorder's own count stands.
        """
        self.sync()
        if number is not None:
            self.publisher.turn = number
        state = self.session.state
        self.publisher.emit(TurnEnded, status=str(state.status), ended=self.session.ended)

    def _records(self) -> None:
        turns = self.session.turns
        while self._turns < len(turns):
            record = turns[self._turns]
            if not self._seen:
                self._opened(record)
            self._emit_new(record)
            if self._turns == len(turns) - 1:
                return  # the newest record may still grow
            self._turns += 1
            self._seen = {}

    def _opened(self, record: TurnRecord) -> None:
        self._seen["opened"] = 1
        if record.user:
            self.publisher.turn = max(self.publisher.turn, self._base or 0) + 1
            self.publisher.emit(CallerTranscript, text=record.user, source="text")

    def _new(self, name: str, items: Sequence[Any]) -> Sequence[Any]:
        done = self._seen.get(name, 0)
        if done == len(items):
            return ()
        self._seen[name] = len(items)
        return items[done:]

    def _emit_new(self, record: TurnRecord) -> None:
        emit = self.publisher.emit
        for action in self._new("actions", record.actions):
            emit(
                EngineDecision,
                phase=action.phase,
                status=str(action.status),
                directive=action.directive,
                visible_tools=sorted(action.visible_tools),
                preempt=action.preempt,
                asks=list(action.asks),
                calls=[c.name for c in action.calls],
                hints=[{"tag": h.tag, "text": h.text} for h in action.hints],
            )
        for gate in self._new("gates", record.gates):
            emit(
                GateDecision,
                tool=gate["tool"],
                decision="veto" if gate["decision"] == "veto" else "allow",
                reason=gate.get("reason"),
                open_steps=list(gate.get("open", [])),
                log=gate.get("log"),
            )
        for call in self._new("llm_calls", record.llm_calls):
            self._call(call, "llm", record.gates)
        for call in self._new("fired", record.fired):
            self._call(call, "engine", ())
        for said in self._new("bot", record.bot):
            emit(BotUtteranceEvent, text=said.text, source=said.source)
        for part in self._new("payloads", record.payloads):
            emit(PayloadEvent, part=dict(part))
        for entry in self._new("events", record.events):
            emit(
                DebugEvent,
                tag=entry.tag,
                n=entry.n,
                data={k: trace_value(v) for k, v in entry.data.items()},
            )

    def _call(self, call: RecordedCall, by: str, gates: Sequence[Mapping[str, Any]]) -> None:
        result = dict(call.result)
        vetoed = call.outcome == "refused" and any(
            g["tool"] == call.name and g["decision"] == "veto" for g in gates
        )
        outcome = "vetoed" if vetoed else call.outcome
        reason = None if outcome == "ok" else _reason(result)
        executors = self.session.agent.flow.executors.get(call.name, ()) if by == "engine" else ()
        task = executors[0] if executors else None
        self.publisher.emit(ToolCallEvent, name=call.name, args=dict(call.args), by=by, task=task)
        self.publisher.emit(
            ToolResultEvent, name=call.name, outcome=outcome, reason=reason, result=result, by=by
        )

    def _slot_changes(self) -> None:
        reported = self._slots
        for name, record in self.session.state.slots.items():
            before = reported.get(name)
            if before is record:  # records are frozen: nothing new (most syncs)
                continue
            now = _slot_view(record)
            was = None if before is None else _slot_view(before)
            if was is None and now[0] == "empty":
                continue
            reported[name] = record
            if same_value(now, was):
                continue
            self.publisher.emit(
                SlotChange,
                slot=name,
                status=now[0],
                value=_json(now[1]),
                source=None if now[2] is None else str(now[2]),
                previous_status=was[0] if was else None,
            )

    def _checklists(self) -> None:
        supervisor = self.session.supervisor
        if supervisor is None:
            return
        # The supervisor works its payload out again only when the procedure state or the
        # variables changed: the payload of the last sync means the checklist did not move.
        status: dict[str, Any] = supervisor.status(self.session.state.variables)  # read only
        if status is self._checklist_status:
            return
        self._checklist_status = status
        current = status.get("current_step")
        for proc in status["procedures"]:
            fields = {
                "procedure": proc["key"],
                "title": proc.get("title") or "",
                "armed": bool(proc.get("armed", True)),
                "current_step": current,
                "steps": [
                    {
                        "id": s["id"],
                        "title": s.get("title") or "",
                        "state": s["state"],
                        "current": bool(s.get("current")),
                    }
                    for s in proc["steps"]
                ],
                "last_violation": proc.get("last_violation"),
            }
            if not same_value(self._checklist.get(proc["key"]), fields):
                self._checklist[proc["key"]] = fields
                self.publisher.emit(ChecklistStatus, **fields)

    def _transaction(self) -> None:
        summary = self.transaction(self.session) if self.transaction else None
        if summary is None or summary == self._txn:
            return
        self._txn = summary
        self.publisher.emit(
            TransactionEvent,
            name=summary.get("intent"),
            status=str(summary.get("status", "")),
            state=_json(summary),
        )

    def _checkpoint(self) -> None:
        session = self.session
        if session.conflict is not None and not self._conflict:
            self._conflict = True
            self.publisher.emit(
                CheckpointEvent,
                action="conflict",
                expected_version=session.conflict.get("expected_version"),
                current_version=session.conflict.get("current_version"),
            )
        version = session.checkpointer.version if session.checkpointer is not None else 0
        if version > self._version:
            self._version = version
            self.publisher.emit(CheckpointEvent, action="saved", version=version)

    def _corrections(self) -> None:
        monitor = self.monitor()
        if monitor is None:
            return
        stats = monitor.stats
        delivered = stats.corrections[self._monitor.get("delivered", 0) :]
        for c in delivered:
            self.publisher.emit(
                CorrectionEvent,
                status="delivered",
                step=c.get("step"),
                text=c.get("text", ""),
                channel=c.get("channel"),
                severity=c.get("severity"),
            )
        for o in stats.observed[self._monitor.get("observed", 0) :]:
            self.publisher.emit(
                CorrectionEvent, status="suppressed", step=o.get("step"), reason=o.get("why")
            )
        self._monitor = {"delivered": len(stats.corrections), "observed": len(stats.observed)}
        self._queue(monitor, {c.get("step") for c in delivered})

    def _queue(self, monitor: Any, delivered: set[Any]) -> None:
        """Notes that joined the monitor's queue, and those that left it undelivered."""
        queue = tuple(monitor.ladder.queue)
        for c in queue:
            if not any(c is q for q in self._queued):
                self.publisher.emit(
                    CorrectionEvent,
                    status="queued",
                    step=c.step,
                    text=c.text,
                    severity=str(c.severity.value),
                )
        for c in self._queued:
            if not any(c is q for q in queue) and c.step not in delivered:
                self.publisher.emit(
                    CorrectionEvent,
                    status="expired",
                    step=c.step,
                    text=c.text,
                    reason=_why_dropped(c, monitor),
                )
        self._queued = queue


def _why_dropped(correction: Any, monitor: Any) -> str:
    """Why a queued note left the queue without being delivered."""
    if monitor.clock() > correction.expires_at:
        return "expired"
    sup = monitor.session.supervisor
    if sup is not None and correction.visit != sup.state.visit:
        return "topic visit changed"
    return "step no longer open, or no longer allowed"


def record_session(
    session: StewardSession, publisher: EventPublisher, *, monitor: Callable[[], Any] = lambda: None
) -> SessionRecorder:
    """A recorder of ``session`` onto ``publisher``, redacting as the session's traces do."""
    publisher.redaction = session.secrets.bound
    recorder = SessionRecorder(session, publisher, monitor=monitor, transaction=transaction_summary)
    session.before_checkpoint.append(recorder.store_before_checkpoint)
    return recorder


def _reason(result: Mapping[str, Any]) -> str | None:
    """Why a call did not succeed, in the words its result gives."""
    for key in ("reason", "error_code", "error"):
        value = result.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _slot_view(record: SlotRecord) -> tuple[str, Any, Any]:
    """What a slot change reports: status, value and source."""
    return str(record.status), record.value, record.source


def _json(value: object) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return str(value)
