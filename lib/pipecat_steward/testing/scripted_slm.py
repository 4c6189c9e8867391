"""A scripted logic_slm: a local OpenAI-compatible server answering structured requests.

Point a stage at it (``ScriptedSLM.stage()``: provider ``openai_compatible``, its
``base_url``) and every structured call the monitor, the extractor or the judge makes is
answered from a script (one answer per request, in order) or by a function of the request,
after a configurable latency. An answer is a JSON object, raw text (to test garbage), or a
:class:`Fail` (an HTTP error). Every request is recorded with its system prompt, user message
and schema. Runs on 127.0.0.1, offline.

Example::

    async with ScriptedSLM(answer=lambda req: {"allow": True}, latency=0.8) as slm:
        result = await structured_completion(slm.stage(), schema, system, user, scope="llm_judge")
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self, TypeAlias

from aiohttp import web

from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.slm.config import SLMStage

__all__ = [
    "Answer",
    "Delayed",
    "Fail",
    "SLMRequest",
    "ScriptedSLM",
    "VerdictOracle",
    "null_object",
    "verdict",
]

_CLOSE = {"Connection": "close"}


@dataclass(frozen=True, slots=True)
class Fail:
    """Answer with an HTTP error (``status``) instead of a completion."""

    status: int = 500
    message: str = "scripted failure"


@dataclass(frozen=True, slots=True)
class Delayed:
    """Answer ``answer`` after ``seconds`` instead of the server's latency."""

    answer: Answer
    seconds: float


Answer: TypeAlias = Mapping[str, Any] | str | Fail | Delayed
"""A JSON object, raw text, an HTTP failure, or one of these with its own delay."""


@dataclass(frozen=True, slots=True)
class SLMRequest:
    """One structured request as the server received it."""

    model: str
    system: str
    user: str
    schema: Mapping[str, Any] | None
    body: Mapping[str, Any] = field(repr=False)

    @property
    def kind(self) -> Literal["adherence", "extraction", "llm_judge"]:
        """Which consumer asked, read from the schema's shape."""
        props = (self.schema or {}).get("properties", {})
        if "violation" in props:
            return "adherence"
        return "llm_judge" if set(props) == {"allow"} else "extraction"


class ScriptedSLM:
    """``POST /v1/chat/completions`` on 127.0.0.1, answered by script or by function.

    Attributes:
        requests: Every request received, in order.
    """

    def __init__(
        self,
        script: Iterable[Answer] = (),
        *,
        answer: Callable[[SLMRequest], Answer] | None = None,
        latency: float = 0.0,
        model: str = "scripted-slm",
    ) -> None:
        """Create the server (it listens on ``__aenter__``).

        Args:
            script: One answer per request, in order; used before ``answer``.
            answer: Answers requests once the script is exhausted (default: ``{}``).
            latency: Seconds to wait before every answer.
            model: The model name the stage asks for.
        """
        self.script: list[Answer] = list(script)
        self.answer = answer
        self.latency = latency
        self.model = model
        self.requests: list[SLMRequest] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The ``base_url`` of the OpenAI-compatible endpoint."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stage(self, **overrides: Any) -> SLMStage:
        """A resolved stage pointing at this server (``openai_compatible``, ``json_schema``)."""
        fields: dict[str, Any] = {"provider": "openai_compatible", "model": self.model,
                                  "base_url": self.base_url, "timeout_s": 5.0}  # fmt: skip
        return SLMStage(**{**fields, **overrides})

    def of_kind(self, kind: str) -> list[SLMRequest]:
        """The requests of one consumer (``adherence``, ``extraction``, ``llm_judge``)."""
        return [r for r in self.requests if r.kind == kind]

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Stop listening (requests then fail: the SLM is down)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _next(self, request: SLMRequest) -> Answer:
        if self.script:
            return self.script.pop(0)
        return self.answer(request) if self.answer else {}

    async def _chat(self, http: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await http.json()
        request = _parse(body)
        self.requests.append(request)
        answer, delay = self._next(request), self.latency
        if isinstance(answer, Delayed):
            answer, delay = answer.answer, answer.seconds
        if delay:
            await asyncio.sleep(delay)
        if isinstance(answer, Fail):
            error = {"error": {"message": answer.message, "type": "server_error"}}
            return web.json_response(error, status=answer.status, headers=_CLOSE)
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return web.json_response(_completion(request.model, content), headers=_CLOSE)


def _parse(body: Mapping[str, Any]) -> SLMRequest:
    messages: list[Mapping[str, Any]] = list(body.get("messages", []))
    system = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    fmt: Mapping[str, Any] = body.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") if "json_schema" in fmt else fmt.get("schema")
    return SLMRequest(str(body.get("model", "")), system, user, schema, body)


def _completion(model: str, content: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "refusal": None}
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": {
            "prompt_tokens": len(content) // 4 + 100,
            "completion_tokens": len(content) // 4,
            "total_tokens": len(content) // 2 + 100,
        },  # fmt: skip
    }


_REQUIREMENT = re.compile(r"^- (\w+): satisfied when ", re.M)
_CALLER_ID = re.compile(r"^\[(e\d+)\] caller: ", re.M)


def verdict(
    satisfied: Iterable[str] = (),
    *,
    evidence: Iterable[str] = (),
    violation: tuple[str, str | None] | None = None,
    not_applicable: Iterable[str] = (),
    unsatisfied: Iterable[str] = (),
    suggestion: str | None = None,
) -> dict[str, Any]:
    """A well-formed adherence verdict (the strict schema), for scripts and oracles."""
    ids = list(evidence)
    rows = [{"step": s, "status": "satisfied", "evidence_ids": ids, "missing": None}
            for s in satisfied]  # fmt: skip
    rows += [{"step": s, "status": "unsatisfied", "evidence_ids": [], "missing": "not shown"}
             for s in unsatisfied]  # fmt: skip
    kind, step = violation or ("none", None)
    return {
        "reasoning": "scripted",
        "current_step": None,
        "satisfied": list(satisfied),
        "assessments": rows,
        "violation": {"kind": kind, "step": step, "detail": None if kind == "none" else kind},
        "not_applicable": list(not_applicable),
        "suggested_correction": suggestion,
    }


def _invented(prop: Mapping[str, Any]) -> Any:
    kinds = prop.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if prop.get("enum"):
        return next(v for v in prop["enum"] if v is not None)
    for kind, value in (("boolean", True), ("integer", 999), ("number", 999.0),
                        ("string", "invented by the model"), ("array", [])):  # fmt: skip
        if kind in kinds:
            return value
    return None


def null_object(request: SLMRequest) -> dict[str, Any]:
    """Every property of the request's schema set to null (an extraction that found nothing)."""
    return dict.fromkeys((request.schema or {}).get("properties", {}))


Behaviour = Literal["truth", "lie", "garbage", "stall", "fail"]
GARBAGE = "sure! the caller agreed to everything"


@dataclass
class VerdictOracle:
    """Answers adherence checks from ground truth: requirements in ``truth`` are satisfied.

    The cited evidence is the latest caller utterance of the request. Extraction requests get
    all-null objects and judge requests ``allow: false``. ``truth`` may grow as a scenario
    advances (see ``run_scenario_monitored``). ``behaviour`` turns the oracle into a faulty
    model: ``lie`` (every asked requirement satisfied; extraction invents a value for every
    property), ``garbage`` (non-JSON text), ``stall`` (answers after ``stall_s`` seconds, past
    any timeout) or ``fail`` (HTTP 500).
    """

    truth: set[str] = field(default_factory=lambda: set[str]())
    behaviour: Behaviour = "truth"
    stall_s: float = 30.0

    def __call__(self, request: SLMRequest) -> Answer:
        match self.behaviour:
            case "garbage":
                return GARBAGE
            case "fail":
                return Fail(500)
            case "stall":
                return Delayed(self._truthful(request), self.stall_s)
            case "lie":
                return self._lie(request)
            case "truth":
                return self._truthful(request)

    def _lie(self, request: SLMRequest) -> Answer:
        if request.kind == "extraction":
            return {k: _invented(v) for k, v in (request.schema or {}).get("properties", {}).items()}
        if request.kind == "llm_judge":
            return {"allow": True}
        callers = _CALLER_ID.findall(request.user)
        return verdict(_REQUIREMENT.findall(request.user), evidence=callers[-1:])

    def _truthful(self, request: SLMRequest) -> Answer:
        if request.kind == "extraction":
            return null_object(request)
        if request.kind == "llm_judge":
            return {"allow": False}
        asked = _REQUIREMENT.findall(request.user)
        callers = _CALLER_ID.findall(request.user)
        done = [s for s in asked if s in self.truth and callers]
        open_ = [s for s in asked if s not in done]
        return verdict(done, evidence=callers[-1:], unsatisfied=open_)


async def run_scenario_monitored(
    agent: Any,
    scenario: Any,
    slm: ScriptedSLM,
    *,
    oracle: VerdictOracle | None = None,
    ledger: Any = None,
    extract: bool = True,
) -> tuple[list[dict[str, Any]], Any, Any]:
    """Play a scenario like ``simulate.run_scenario`` with the monitor and extractor attached.

    The scenario's first-turn ``verdict`` is set-up state (applied before the call, like host
    seeding); every later ``verdict`` is ground truth handed to ``oracle`` at that turn, and the
    monitor must find it through the SLM. Each trace gains ``slm_calls``, ``corrections`` and
    ``extracted``.

    Returns:
        ``(traces, monitor, extractor)``.
    """
    from pipecat_steward.agent.loader import Agent, load_agent
    from pipecat_steward.pipecat.extractor import attach_extractor
    from pipecat_steward.pipecat.monitor import attach_monitor
    from pipecat_steward.pipecat.steward import Steward
    from pipecat_steward.slm import SLMClient
    from pipecat_steward.testing import scenario as sc
    from pipecat_steward.testing.pipeline import TextPipeline
    from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
    from pipecat_steward.testing.simulate import ScriptedModel, scenario_step

    loaded = agent if isinstance(agent, Agent) else load_agent(agent)
    loaded = sc.scripted_backend(loaded, scenario.backend)
    clock = sc.TurnClock()
    steward = Steward(loaded, event_data=scenario.event_data, channel=scenario.channel,
                      gate_timeout_s=scenario.gate_timeout_s, clock=clock)  # fmt: skip
    await steward.start()
    model = ScriptedModel()
    llm = ScriptedLLM([FunctionStep(model) for _ in range(12)], admit_hidden=True)
    steward.attach(llm)
    traces: list[dict[str, Any]] = []
    async with SLMClient(ledger=ledger) as client:
        monitor = attach_monitor(steward, llm, client, slm.stage())
        extractor = attach_extractor(steward, client, slm.stage()) if extract else None
        async with TextPipeline(llm, observers=steward.observers) as pipeline:
            for number, turn in enumerate(scenario.turns, 1):
                clock.turn = number
                if oracle is not None and turn.verdict is not None and number > 1:
                    oracle.truth |= {*turn.verdict.satisfied, *turn.verdict.not_applicable}
                setup = turn if number == 1 else turn.model_copy(update={"verdict": None})
                if oracle is not None:
                    oracle.behaviour = turn.slm or scenario.slm
                sc.before_turn(steward.session, setup)
                model.queue = [scenario_step(i) for i in turn.llm]
                llm.extend(FunctionStep(model) for _ in range(12 - llm.remaining))
                since = len(steward.session.turns)
                await pipeline.say(turn.user)
                await pipeline.settle()
                await steward.relay.bus.drain()
                await monitor.drain()
                if extractor is not None:
                    await extractor.drain()
                record = sc.turn_record(steward.session, turn.user, since)
                trace = sc.trace_turn(number, steward.session, record)
                trace["slm_calls"] = monitor.stats.by_turn.get(number, 0)
                trace["corrections"] = [c for c in monitor.stats.corrections if c["turn"] == number]
                by_turn = extractor.stats.by_turn if extractor else {}
                trace["extracted"] = by_turn.get(number, {})
                traces.append(redact_tree(trace, monitor.secrets.redact))
        await monitor.aclose()
    return traces, monitor, extractor
