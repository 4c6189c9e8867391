"""The structured-output client: one call shape over every provider, metered and bounded.

``SLMClient.complete(stage, schema, system, user, *, timeout, scope)`` normalises the
schema for strict mode, calls the stage's provider module under a hard ``asyncio.timeout``,
parses and validates the reply against the schema and returns an :class:`SLMResult`. Nothing
but the :class:`~pipecat_steward.exceptions.SLMError` family leaves it. Every call, failed or
not, writes one usage row to the client's ledger off the latency path.

A :class:`SLMClient` keeps one SDK client per endpoint (connection reuse, and the memory of
which JSON mode an endpoint accepts). Create one per event loop and close it with
:meth:`SLMClient.aclose` (or ``async with``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipecat_steward.core.costing import Scope, UsageEvent, UsageOutcome
from pipecat_steward.exceptions import (
    SLMError,
    SLMOutputError,
    SLMResolutionError,
    SLMTimeoutError,
    SLMTransportError,
)
from pipecat_steward.slm.config import Provider, SLMStage
from pipecat_steward.slm.result import ProviderReply, ProviderRequest, SLMProvider, SLMResult
from pipecat_steward.slm.schemas import parse_json_object, strict_schema, validate_result
from pipecat_steward.storage.ledger import UsageSink, default_ledger

__all__ = ["SLMClient"]

_log = logging.getLogger(__name__)

_MODULES: Mapping[Provider, tuple[str, str]] = {
    "openai": ("pipecat_steward.slm.openai_compat", "OpenAICompatProvider"),
    "openai_compatible": ("pipecat_steward.slm.openai_compat", "OpenAICompatProvider"),
    "google": ("pipecat_steward.slm.google", "GoogleProvider"),
    "vertex": ("pipecat_steward.slm.vertex", "VertexProvider"),
    "bedrock": ("pipecat_steward.slm.bedrock", "BedrockProvider"),
}


def _utc_now() -> str:
    """Return the current UTC time as ISO-8601 (the default row timestamp)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class _Call:
    """What one in-flight call has learned so far, for its usage row."""

    started: float
    reply: ProviderReply | None = None
    outcome: UsageOutcome = "ok"


class SLMClient:
    """Structured completions over the logic_slm providers, metered to a ledger.

    Args:
        ledger: Where usage rows go; ``None`` means the default local ledger
            (:func:`~pipecat_steward.storage.ledger.default_ledger`); pass a
            :class:`~pipecat_steward.storage.ledger.NullLedger` to meter nowhere.
        clock: Monotonic seconds, for latency (injected so tests and replays control it).
        now: ISO-8601 wall time, for the rows' ``at``.

    """

    def __init__(
        self,
        *,
        ledger: UsageSink | None = None,
        clock: Callable[[], float] = time.perf_counter,
        now: Callable[[], str] = _utc_now,
    ) -> None:
        self.ledger: UsageSink = ledger if ledger is not None else default_ledger()
        self._clock = clock
        self._now = now
        self._providers: dict[str, SLMProvider] = {}
        self._making = asyncio.Lock()  # one client per endpoint, however many first calls

    async def complete(
        self,
        stage: SLMStage,
        schema: Mapping[str, Any],
        system: str,
        user: str,
        *,
        timeout: float | None = None,
        scope: Scope,
    ) -> SLMResult:
        """Return a schema-valid result or raise an ``SLMError``; see the module docstring."""
        model = stage.model_for(scope)
        bound = timeout if timeout is not None else stage.timeout_s
        provider = await self._provider(stage)
        async with self._guard(stage, scope, model, bound) as call:
            strict = strict_schema(schema)
            request = ProviderRequest(
                stage=stage, model=model, system=system, user=user, schema=strict, timeout=bound
            )
            call.reply = await provider.complete(request)
            value = parse_json_object(call.reply.text)
            validate_result(value, strict)
            return self._result(stage, scope, model, call, value)
        raise AssertionError("unreachable")  # the guard either returns above or raises

    async def complete_text(
        self, stage: SLMStage, system: str, user: str, *, timeout: float, scope: Scope
    ) -> str:
        """Return a plain-text answer (the legacy judge's word protocol), metered the same."""
        model = stage.model_for(scope)
        provider = await self._provider(stage)
        async with self._guard(stage, scope, model, timeout) as call:
            request = ProviderRequest(
                stage=stage, model=model, system=system, user=user, schema=None, timeout=timeout
            )
            call.reply = await provider.complete(request)
            return call.reply.text
        raise AssertionError("unreachable")

    @asynccontextmanager
    async def _guard(
        self, stage: SLMStage, scope: Scope, model: str, timeout: float
    ) -> AsyncIterator[_Call]:
        """Bound the call, map every failure into the SLMError family, meter in all cases."""
        call = _Call(started=self._clock())
        try:
            async with asyncio.timeout(timeout):
                yield call
        except SLMError as err:
            call.outcome = _outcome_of(err)
            raise
        except asyncio.CancelledError:
            call.outcome = "cancelled"  # the caller gave up; the row still shows the attempt
            raise
        except TimeoutError:
            call.outcome = "timeout"
            raise SLMTimeoutError(
                f"{stage.provider}/{model}: no answer within {timeout:.2f}s"
            ) from None
        except Exception as err:  # the promise: nothing but SLMError leaves the client
            call.outcome = "transport_error"
            raise SLMTransportError(
                f"{stage.provider}/{model}: {type(err).__name__}: {err}"
            ) from err
        finally:
            self._meter(stage, scope, model, call, self._clock() - call.started)

    async def _provider(self, stage: SLMStage) -> SLMProvider:
        """Return the endpoint's provider module instance, creating it on first use.

        Made in a worker thread, before any call's deadline starts: importing an SDK and
        building its client (boto3 reads its service models from disk) can take longer than a
        call may, and would stall the event loop, and the caller's audio with it.
        """
        key = f"{stage.endpoint_key()}|{stage.api_key_env}"
        if key not in self._providers:
            async with self._making:
                if key not in self._providers:
                    self._providers[key] = await asyncio.to_thread(_make_provider, stage)
        return self._providers[key]

    def _result(
        self,
        stage: SLMStage,
        scope: Scope,
        model: str,
        call: _Call,
        value: Mapping[str, Any],
    ) -> SLMResult:
        """Assemble the caller's result; latency runs from the call's start to now."""
        reply = call.reply
        assert reply is not None  # set just before parsing succeeded
        return SLMResult(
            value=value,
            raw_text=reply.text,
            usage=reply.usage,
            latency_ms=(self._clock() - call.started) * 1000,
            provider=stage.provider,
            model=model,
            scope=scope,
            mode=reply.mode,
        )

    def _meter(
        self, stage: SLMStage, scope: Scope, model: str, call: _Call, seconds: float
    ) -> None:
        """Hand one usage row to the ledger; a ledger failure is logged, never raised."""
        usage = call.reply.usage if call.reply is not None else None
        try:
            self.ledger.record(
                UsageEvent(
                    provider=stage.provider,
                    model=model,
                    input_tokens=usage.input_tokens if usage else 0,
                    output_tokens=usage.output_tokens if usage else 0,
                    latency_ms=round(seconds * 1000, 3),
                    scope=scope,
                    outcome=call.outcome,
                    stage_id=stage.stage_id,
                    tenant_id=stage.identity.tenant_id,
                    agent_id=stage.identity.agent_id,
                    session_id=stage.identity.session_id,
                    at=self._now(),
                )
            )
        except Exception:  # metering must never fail the call it describes
            _log.exception("usage ledger rejected a logic_slm row")

    async def aclose(self) -> None:
        """Close every endpoint's connections."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            try:
                await provider.aclose()
            except Exception:  # closing is best effort; one endpoint must not block the rest
                _log.warning("closing a logic_slm endpoint failed", exc_info=True)

    async def __aenter__(self) -> SLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _make_provider(stage: SLMStage) -> SLMProvider:
    """Import the endpoint's provider module and build its provider (blocking)."""
    module_name, class_name = _MODULES[stage.provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise SLMResolutionError(
            f"logic_slm ({stage.provider}) needs {err.name}: pip install 'pipecat-steward[slm]'"
        ) from None
    return getattr(module, class_name)(stage)


def _outcome_of(err: SLMError) -> UsageOutcome:
    """Name a failure for the usage row."""
    if isinstance(err, SLMTimeoutError):
        return "timeout"
    if isinstance(err, SLMOutputError):
        return "output_error"
    return "transport_error"
