"""The procedure monitor's driver: relay events in, SLM assessments and corrections out.

``attach_monitor(steward, llm, client, stage)`` subscribes a :class:`ProcedureMonitor` to the
steward's relay bus and plugs it into the session's oversight (its judge, and its rider). It
never touches the frame path: every event is handled on the bus's own task, every SLM call runs in a background task
through the metered :class:`~pipecat_steward.slm.SLMClient`, and every fault is logged and
swallowed (fail open). The policy is ``pipecat_steward.core.monitor``:

- the assistant's text is complete → the ledger records it, the check (if the policy wants
  one) starts at once and runs during playout, so its verdict is ready by turn end;
- the caller's final transcript → a queued correction (at most one) is delivered as a silent
  note, then an eligible check starts;
- a tool result → tool evidence; a blackboard change → a platform fact;
- a judge-gated tool call → :meth:`ProcedureMonitor.judge` reuses the in-flight or cached
  assessment before asking again;
- ``severe`` → the bot is interrupted (where the service allows) and the note asks for a reply;
- the promise watchdog nudges once when a promised tool action never happens.

On services without a silent channel (or with ``rider=True``) queued corrections ride the
next tool result instead, as ``steward_correction``; :meth:`ProcedureMonitor.take_rider`
exposes the same note to hosts with their own tool handlers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from loguru import logger
from pipecat.processors.frame_processor import FrameProcessor

from pipecat_steward.core.monitor import (
    VERDICT_SCHEMA,
    Assess,
    AssessmentRequest,
    AssessReason,
    Checked,
    CheckResult,
    Correction,
    Deliver,
    Discarded,
    EvidenceLedger,
    Exchange,
    LadderState,
    Moment,
    Observe,
    VerdictCache,
    Watchdog,
    add_application,
    add_tool_result,
    add_utterance,
    add_variable,
    arm_watchdog,
    build_request,
    check_verdict,
    claim_backed,
    decide_assessment,
    disarm_watchdog,
    fire_watchdog,
    grant,
    judge_requirements,
    on_finding,
    out_of_order_tools,
    played_out,
    still_valid,
    take_due,
)
from pipecat_steward.core.procedures import AwaitJudge, Verdict, current_step
from pipecat_steward.core.procedures.outcome import result_mapping
from pipecat_steward.pipecat.events import (
    AssistantTextComplete,
    BotStoppedSpeaking,
    FunctionCallResult,
    FunctionCallStarted,
    Interruption,
    SessionEvent,
    Subscription,
    UserStartedSpeaking,
    UserTranscript,
)
from pipecat_steward.pipecat.listener import SeatedListener
from pipecat_steward.pipecat.providers import ProviderAdapter, adapter_for
from pipecat_steward.pipecat.redaction import secrets_for
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.oversight import Oversight
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.slm import DEFAULT_PROMPTS, SLMClient, SLMStage, compose_system

__all__ = ["MonitorStats", "MonitorUnavailable", "ProcedureMonitor", "attach_monitor"]


class MonitorUnavailable(RuntimeError):
    """The monitor could not assess (the logic_slm failed): a gate names it as the cause."""


@dataclass
class MonitorStats:
    """What the monitor did, for traces, tests and benchmarks.

    Attributes:
        slm_calls: Assessments sent to the SLM.
        cache_hits: Assessments answered from the verdict cache.
        reused: Judge-gate waits answered by an in-flight assessment.
        failures: SLM calls that failed (timeout, transport, garbage): the monitor failed open.
        discarded: Verdicts voided by the checks (undeclared step, invented evidence, stale).
        corrections: Every correction delivered: step, kind, severity, channel, text, turn.
        observed: Findings recorded without a correction, with the rule that held them back.
        by_turn: Caller turn → SLM calls started in it.
    """

    slm_calls: int = 0
    cache_hits: int = 0
    reused: int = 0
    failures: int = 0
    discarded: int = 0
    corrections: list[dict[str, Any]] = field(default_factory=lambda: [])
    observed: list[dict[str, Any]] = field(default_factory=lambda: [])
    by_turn: dict[int, int] = field(default_factory=lambda: {})


class ProcedureMonitor(SeatedListener):
    """The monitor of one session (see the module docstring)."""

    seat = "monitor"
    label = "procedure monitor"

    def __init__(
        self,
        steward: Steward,
        llm: FrameProcessor | None,
        client: SLMClient,
        stage: SLMStage,
        *,
        provider: ProviderAdapter | None = None,
        rider: bool | None = None,
        timeout: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        oversight: Oversight | None = None,
    ) -> None:
        self.session: StewardSession = steward.session
        self.oversight = oversight or self.session.oversight
        """The session's port this monitor plugs its judge and rider into."""
        self.steward = steward
        self.llm = llm
        self.client = client
        self.stage = stage
        self._provider = provider or _adapter(steward, llm)
        self.channels = self._provider.channels
        self.rider = (not self.channels.silent_note) if rider is None else rider
        self.timeout = timeout
        self.clock = clock
        sensitive = frozenset(v.name for v in steward.agent.variables if v.sensitive)
        self.ledger = EvidenceLedger(excluded=sensitive)
        self.secrets = secrets_for(self.session)
        self.ladder = LadderState()
        self.watchdog = Watchdog()
        self.exchange = Exchange()
        self.cache = VerdictCache()
        self.stats = MonitorStats()
        self.turn = 0
        self._seen: dict[str, Any] = dict(self.session.state.variables)
        self._turn_tools: list[tuple[str, bool]] = []
        self._inflight: dict[Any, asyncio.Task[CheckResult | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._deferred: tuple[Moment, str] | None = None
        self._sub: Subscription | None = None
        self.on_verdict: Callable[[AssessmentRequest, CheckResult], None] | None = None
        """Called with every fresh checked verdict (traces and tests)."""
        self._system = compose_system(
            stage.prompts.get("adherence") or DEFAULT_PROMPTS["adherence"], VERDICT_SCHEMA
        )

    # -- wiring ---------------------------------------------------------------------------

    @property
    def provider(self) -> ProviderAdapter:
        """The adapter notes and interruptions go through: the one of the service inferring now.

        With the steward steering a switcher of ``llm``, the switcher's active service: an
        interruption broadcast from a service that is not generating would leave the one that
        is talking on. A switcher's services are all cascaded, so their channels are alike.
        """
        mine = self._provider
        active = self.steward.serving(mine.llm)
        return mine if active is mine.llm else adapter_for(active)

    def _plug(self) -> None:
        """Plug the judge (and, if riding, the rider) into the oversight."""
        self.oversight.plug(self.judge, self.take_rider if self.rider else None)

    def _unplug(self) -> None:
        """Stop judging and riding, cancel background work."""
        self.oversight.unplug(self.judge, self.take_rider)
        for task in list(self._tasks):
            task.cancel()

    @property
    def active(self) -> bool:
        """Whether the session has procedures to watch."""
        return self.session.supervisor is not None

    async def drain(self) -> None:
        """Wait for every background assessment and delivery (tests and simulations)."""
        while pending := [t for t in self._tasks if not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel background work (the watchdog timer and running assessments)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- events ---------------------------------------------------------------------------

    async def on_event(self, event: SessionEvent) -> None:
        """Handle one relay event; every fault is logged and swallowed (fail open)."""
        if not self.active:
            return
        try:
            self._observe_variables()
            await self._dispatch(event)
        except Exception:
            logger.exception("procedure monitor failed on an event; continuing without it")

    async def _dispatch(self, event: SessionEvent) -> None:
        now = self.clock()
        match event:
            case UserTranscript(text=text, turn=turn):
                await self._on_caller(text, now, turn)
            case AssistantTextComplete(text=text):
                self._on_assistant(text, now)
            case FunctionCallStarted():
                self.watchdog = disarm_watchdog(self.watchdog)
            case FunctionCallResult(name=name, result=result, tool_call_id=call_id):
                self._on_tool(name, result, call_id, now)
            case BotStoppedSpeaking():
                self.watchdog = played_out(self.watchdog, now)
            case UserStartedSpeaking() | Interruption():
                self.watchdog = disarm_watchdog(self.watchdog)  # the caller started speaking
            case _:
                pass

    def _observe_variables(self) -> None:
        variables = self.session.state.variables
        for name, value in variables.items():
            if not name.startswith("proc_") and self._seen.get(name, ...) != value:
                self.ledger = add_variable(self.ledger, name, value, self.clock())
        self._seen = dict(variables)

    async def _on_caller(self, text: str, now: float, turn: int) -> None:
        # The relay's stamp is the session's caller turn; count only without one.
        self.turn = turn or self.turn + 1
        self._turn_tools = []
        self.watchdog = disarm_watchdog(self.watchdog)
        self.ledger = add_utterance(self.ledger, "caller", self.secrets.hear(text), now)
        if not self.rider:
            await self._deliver_due(now)
        self._consider("caller_final", "")

    def _on_assistant(self, text: str, now: float) -> None:
        self.ledger = add_utterance(self.ledger, "agent", text, now)
        self._consider("assistant_text", text)
        sup = self.session.supervisor
        assert sup is not None
        self.watchdog = arm_watchdog(self.watchdog, sup.view(self._vars()), text, now)
        if self.watchdog.armed:
            self._spawn(self._watch())

    def _on_tool(self, name: str, result: Any, call_id: str, now: float) -> None:
        self.watchdog = disarm_watchdog(self.watchdog)
        self.ledger = add_tool_result(self.ledger, name, result, at=now)
        self._turn_tools.append((name, _acted(result)))

    def application_message(self, origin: str, text: str) -> None:
        """Record what the host application told the agent as application evidence.

        A supervisor's decision or a payment notification; caller quotes are refused and
        secrets are redacted.
        """
        self._observe_variables()
        clean = self.secrets.redact(text)
        self.ledger = add_application(self.ledger, origin, clean, self.clock())

    def _vars(self) -> Mapping[str, Any]:
        return self.session.state.variables

    # -- assessments ----------------------------------------------------------------------

    def _consider(self, moment: Moment, text: str) -> None:
        sup = self.session.supervisor
        assert sup is not None
        variables = self._vars()
        step = current_step(sup.procs, sup.state, variables)
        self.exchange = self.exchange.follow(step.id if step else None).heard(moment)
        if self._inflight:  # in-progress guard: decide again once the running check is applied
            self._deferred = (moment, text)
            return
        self._decide(moment, text)

    def _decide(self, moment: Moment, text: str) -> None:
        sup = self.session.supervisor
        assert sup is not None
        view = sup.view(self._vars())
        tools = tuple(n for n, acted in self._turn_tools if acted)
        decision = decide_assessment(
            view,
            moment,
            text=text,
            exchange=self.exchange,
            backed=claim_backed(view, text, tools),
            out_of_order=out_of_order_tools(view, tools),
        )
        if isinstance(decision, Assess):
            self.assess(decision.steps, decision.reason)

    def assess(
        self, steps: tuple[str, ...], reason: AssessReason
    ) -> asyncio.Future[CheckResult | None]:
        """Start (or join, or answer from the cache) an assessment of ``steps``."""
        sup = self.session.supervisor
        assert sup is not None
        request = build_request(sup.view(self._vars()), self.ledger, steps, reason)
        request = replace(request, user=self.secrets.redact(request.user))  # by value
        running = self._inflight.get(request.key)
        if running is not None:
            return running
        cached = self.cache.get(request.key)
        if cached is not None:
            self.stats.cache_hits += 1
            done: asyncio.Future[CheckResult | None] = asyncio.get_running_loop().create_future()
            done.set_result(cached)
            return done
        task = self._spawn(self._run(request))
        self._inflight[request.key] = task
        task.add_done_callback(lambda _: self._inflight.pop(request.key, None))
        self.stats.slm_calls += 1
        self.stats.by_turn[self.turn] = self.stats.by_turn.get(self.turn, 0) + 1
        return task

    async def _run(self, request: AssessmentRequest) -> CheckResult | None:
        redact = self.secrets.redact  # by value, at the last moment: secrets learnt late count too
        try:
            result = await self.client.complete(
                self.stage,
                VERDICT_SCHEMA,
                redact(self._system),
                redact(request.user),
                timeout=self.timeout,
                scope="adherence",
            )
        except Exception as err:  # SLMError and anything else: supervision silence, not harm
            self.stats.failures += 1
            logger.warning(
                f"procedure monitor: assessment failed, failing open: {redact(str(err))}"
            )
            return None
        sup = self.session.supervisor
        assert sup is not None
        checked = check_verdict(result.value, request, sup.procs, self._vars())
        self.cache.put(request.key, checked)
        if self.on_verdict is not None:
            self.on_verdict(request, checked)
        await self._apply(checked, request)
        self._inflight.pop(request.key, None)
        if self._deferred is not None and not self._inflight:
            moment, text = self._deferred
            self._deferred = None
            self._decide(moment, text)
        return checked

    async def _apply(self, checked: CheckResult, request: AssessmentRequest) -> None:
        sup = self.session.supervisor
        assert sup is not None
        if isinstance(checked, Discarded) or request.visit != sup.state.visit:
            self.stats.discarded += 1
            why = checked.why if isinstance(checked, Discarded) else "topic visit changed"
            logger.info(f"procedure monitor: verdict discarded ({why})")
            return
        reasoning = self.secrets.redact(checked.reasoning)
        logger.info(f"procedure monitor verdict ({request.reason}): {reasoning!r}")
        self.session.host_write(sup.verdict(self._vars(), checked.verdict))
        self.ladder, outcome = on_finding(
            self.ladder,
            checked.verdict.violation,
            sup.view(self._vars()),
            self.clock(),
            checked.suggestion,
        )
        await self._climb(outcome, checked)

    async def _climb(self, outcome: Observe | Deliver | None, checked: Checked) -> None:
        violation = checked.verdict.violation
        match outcome:
            case Observe(why=why) if violation is not None:
                self.stats.observed.append(
                    {"kind": violation.kind, "step": violation.step, "why": why, "turn": self.turn}
                )
            case Deliver(correction=c, when="now"):
                await self._deliver_now(c)
            case Deliver() | Observe() | None:
                pass

    async def judge(self, pending: AwaitJudge) -> Verdict | None:
        """The session's judge hook: reuse an in-flight or cached assessment, else ask now."""
        wanted = set(pending.steps)
        for key, task in list(self._inflight.items()):
            if wanted & set(key[0].split("/", 1)[1].split(",")):
                self.stats.reused += 1
                found = await asyncio.shield(task)
                if isinstance(found, Checked) and wanted <= set(found.verdict.satisfied):
                    return Verdict(satisfied=found.verdict.satisfied)
        sup = self.session.supervisor
        if sup is None:
            return None
        steps = judge_requirements(sup.view(self._vars()), focus=pending.steps)
        found = await asyncio.shield(self.assess(steps, "gate"))
        if isinstance(found, Checked):  # an answer, even "nothing satisfied", is not a timeout
            return Verdict(satisfied=found.verdict.satisfied)
        if found is None:  # the logic_slm failed: the gate names the monitor as unavailable
            raise MonitorUnavailable("the adherence check failed")
        return Verdict()  # a voided verdict settles nothing: the prerequisites stay open

    # -- corrections ----------------------------------------------------------------------

    async def _deliver_due(self, now: float) -> None:
        sup = self.session.supervisor
        assert sup is not None
        self.ladder, note = take_due(self.ladder, sup.view(self._vars()), now)
        if note is not None and self.llm is not None:
            await self.provider.send_note(note.text, run_llm=False)
            self._record(note, "silent_note")

    def take_rider(self) -> str | None:
        """The queued correction to carry on the next tool result (spent when taken)."""
        sup = self.session.supervisor
        if sup is None:
            return None
        self.ladder, note = take_due(self.ladder, sup.view(self._vars()), self.clock())
        if note is None:
            return None
        self._record(note, "tool_result_rider")
        return note.text

    async def _deliver_now(self, c: Correction) -> None:
        """Severe: re-check live state, interrupt where possible, and ask for a reply."""
        sup = self.session.supervisor
        if sup is None or self.llm is None:
            return
        if not still_valid(c, sup.view(self._vars()), self.clock()):
            return
        if self.channels.interrupt:
            try:
                await self.provider.interrupt()
            except Exception:  # best effort: a failed interruption does not swallow the note
                logger.warning("procedure monitor: interruption failed; delivering anyway")
        await self.provider.send_note(c.text, run_llm=True)
        self._record(c, "interrupt" if self.channels.interrupt else "note_and_response")

    async def _watch(self) -> None:
        """The promise watchdog's timer: sleep to the deadline, then nudge at most once."""
        while self.watchdog.deadline is not None:
            await asyncio.sleep(max(0.0, self.watchdog.deadline - self.clock()))
            sup = self.session.supervisor
            if sup is None or self.watchdog.deadline is None:
                return
            if self.clock() < self.watchdog.deadline:
                continue
            self.watchdog, nudge = fire_watchdog(
                self.watchdog, sup.view(self._vars()), self.clock()
            )
            if nudge is not None:
                await self._nudge(nudge)

    async def _nudge(self, nudge: Correction) -> None:
        sup = self.session.supervisor
        assert sup is not None
        self.ladder, ok = grant(self.ladder, nudge, sup.view(self._vars()), self.clock())
        if ok and self.llm is not None:
            await self.provider.send_note(nudge.text, run_llm=True)
            self._record(nudge, "note_and_response")

    def _record(self, c: Correction, channel: str) -> None:
        self.stats.corrections.append(
            {
                "step": c.step,
                "kind": c.kind,
                "severity": c.severity.value,
                "channel": channel,
                "text": self.secrets.redact(c.text),
                "turn": self.turn,
            }
        )


def _adapter(steward: Steward, llm: FrameProcessor | None) -> ProviderAdapter:
    """The steward's own adapter when it steers ``llm`` (chosen once), else one for ``llm``."""
    chosen = getattr(steward, "provider", None)
    if isinstance(chosen, ProviderAdapter) and chosen.llm is llm:
        return chosen
    return adapter_for(llm)


_REFUSALS = frozenset(
    {"error", "failed", "failure", "blocked", "vetoed", "refused", "denied", "rejected"}
)


def _acted(result: Any) -> bool:
    """Whether a tool result shows the tool ran (an accepted or pending request counts)."""
    data = result_mapping(result)
    if data is None:
        return result is not False
    status = str(data.get("status", "")).lower()
    return not data.get("error") and data.get("success") is not False and status not in _REFUSALS


def attach_monitor(
    steward: Steward, llm: FrameProcessor | None, client: SLMClient, stage: SLMStage, **kwargs: Any
) -> ProcedureMonitor:
    """Build the monitor for ``steward``'s session and start it (see :class:`ProcedureMonitor`)."""
    return ProcedureMonitor(steward, llm, client, stage, **kwargs).start()
