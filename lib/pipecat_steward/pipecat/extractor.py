"""The entity extractor's driver: one structured SLM call per final caller utterance.

``attach_extractor(steward, client, stage)`` subscribes an :class:`EntityExtractor` to the
steward's relay bus. It is off the voice path: calls run in a background task, one at a time;
when caller turns pile up while a call is running, they coalesce into one follow-up call whose
context still holds the intermediate turns. The policy is ``pipecat_steward.core.extraction``:
eligible variables (scoped by the current step's ``expects``), the ``[<type>, null]`` schema,
the caller-only context window, the skips (empty, non-lexical, synthetic, active secure
capture) and the merge (null never clobbers; slot-backed variables become slot proposals).
Results are merged into the LIVE session state when they arrive; every fault fails open and
every call is metered by the client's ledger.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from pipecat_steward.core.extraction import (
    build_context,
    build_schema,
    eligible,
    extraction_prompt,
    merge_extraction,
    skip_reason,
)
from pipecat_steward.core.procedures import current_step
from pipecat_steward.pipecat.events import SessionEvent, Subscription, UserTranscript
from pipecat_steward.pipecat.listener import SeatedListener
from pipecat_steward.pipecat.redaction import (
    SECURE_CAPTURE_VARIABLE,
    secrets_for,
)
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.slm import DEFAULT_PROMPTS, SLMClient, SLMStage, compose_system

__all__ = ["SECURE_CAPTURE_VARIABLE", "EntityExtractor", "ExtractorStats", "attach_extractor"]


@dataclass
class ExtractorStats:
    """What the extractor did.

    Attributes:
        calls: Structured calls sent.
        failures: Calls that failed (the extractor failed open).
        coalesced: Caller turns folded into a later call.
        skipped: Skip reason → count.
        by_turn: Caller turn → ``{"written", "proposals", "refused"}`` of the call that ran for it.
    """

    calls: int = 0
    failures: int = 0
    coalesced: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: {})
    by_turn: dict[int, dict[str, Any]] = field(default_factory=lambda: {})


class EntityExtractor(SeatedListener):
    """The extractor of one session (see the module docstring)."""

    seat = "extractor"
    label = "entity extractor"
    reads = (UserTranscript,)  # not woken for the rest of a turn's events

    def __init__(
        self,
        steward: Steward,
        client: SLMClient,
        stage: SLMStage,
        *,
        secure_capture: Callable[[], bool] | None = None,
        timeout: float | None = None,
    ) -> None:
        self.steward = steward
        self.session: StewardSession = steward.session
        self.client = client
        self.stage = stage
        self.timeout = timeout
        self.secrets = secrets_for(self.session)
        if secure_capture is not None:
            self.secrets.capture_check = secure_capture
        self.secure_capture = self.secrets.capture_check
        self.stats = ExtractorStats()
        self.caller: list[str] = []
        self.turn = 0
        self._pending = False
        self._task: asyncio.Task[None] | None = None
        self._sub: Subscription | None = None
        self._instruction = stage.prompts.get("extraction") or DEFAULT_PROMPTS["extraction"]

    def _unplug(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def drain(self) -> None:
        """Wait until no extraction is running or pending."""
        while self._task is not None and not self._task.done():
            await asyncio.gather(self._task, return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel a running extraction."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def on_event(self, event: SessionEvent) -> None:
        """Queue an extraction for each final caller transcript (never blocks, never raises)."""
        if not isinstance(event, UserTranscript):
            return
        try:
            self._on_caller(event.text, event.turn)
        except Exception:
            logger.exception("entity extractor failed on a transcript; continuing without it")

    def _on_caller(self, text: str, turn: int = 0) -> None:
        # The relay's stamp is the session's caller turn; count only without one.
        self.turn = turn or self.turn + 1
        why = skip_reason(text, secure_capture=self.secure_capture())
        self.secrets.hear(text)  # during a capture: learn its secrets, never keep the text
        if why is not None:
            self.stats.skipped[why] = self.stats.skipped.get(why, 0) + 1
            return
        self.caller.append(text)
        if self._task is not None and not self._task.done():
            self.stats.coalesced += self._pending  # the older pending turn folds into this one
            self._pending = True
            return
        self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        while True:
            self._pending = False
            await self._extract(self.turn)
            if not self._pending:
                return

    async def _extract(self, turn: int) -> None:
        if self.secure_capture():
            self.stats.skipped["secure_capture"] = self.stats.skipped.get("secure_capture", 0) + 1
            return
        specs = eligible(self.session.agent.variables, self._expects())
        if not specs:
            self.stats.skipped["nothing_eligible"] = (
                self.stats.skipped.get("nothing_eligible", 0) + 1
            )
            return
        context = build_context(self.caller)
        schema = build_schema(specs)
        self.stats.calls += 1
        redact = self.secrets.redact  # by value: a secret said outside a capture never leaves
        try:
            result = await self.client.complete(
                self.stage,
                schema,
                redact(compose_system(self._instruction, schema)),
                redact(extraction_prompt(specs, context)),
                timeout=self.timeout,
                scope="extraction",
            )
        except Exception as err:
            self.stats.failures += 1
            logger.warning(f"entity extractor: call failed, failing open: {redact(str(err))}")
            return
        self._merge(turn, specs, context, result.value)

    def _merge(self, turn: int, specs: Any, context: Any, values: Any) -> None:
        if self.secure_capture():
            return  # a capture started while the call ran: its input must not be written
        merged = merge_extraction(
            specs, self.session.agent.flow, self.session.state, values, context
        )
        self.session.state = merged.state
        self.session.host_write({})  # re-evaluate procedure steps against the new values
        self.stats.by_turn[turn] = {
            "written": list(merged.written),
            "proposals": [
                {
                    "slot": p.name,
                    "value": p.value,
                    "status": p.status,
                    "source": p.source,
                    "taken": p.taken,
                }
                for p in merged.proposals
            ],
            "refused": [list(r) for r in merged.refused],
        }

    def _expects(self) -> tuple[str, ...]:
        sup = self.session.supervisor
        if sup is None:
            return ()
        step = current_step(sup.procs, sup.state, self.session.state.variables)
        return step.expects if step else ()


def attach_extractor(
    steward: Steward, client: SLMClient, stage: SLMStage, **kwargs: Any
) -> EntityExtractor:
    """Build the extractor for ``steward``'s session and start it."""
    return EntityExtractor(steward, client, stage, **kwargs).start()
