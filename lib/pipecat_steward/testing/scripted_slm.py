"""A scripted logic_slm: a local OpenAI-compatible server answering structured requests.

Point a stage at it (``ScriptedSLM.stage()``: provider ``openai_compatible``, its
``base_url``) and every structured call the monitor, the extractor or the judge makes is
answered from a script (one answer per request, in order) or by a function of the request,
after a configurable latency. An answer is a JSON object, raw text (to test garbage), or a
:class:`Fail` (an HTTP error). Every request is recorded with its system prompt, user message
and schema. Runs on 127.0.0.1, offline.

Example::

    async with ScriptedSLM(answer=lambda req: {"allow": True}, latency=0.8) as slm:
        async with SLMClient() as client:
            result = await client.complete(slm.stage(), schema, system, user, scope="llm_judge")
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from aiohttp import web

from pipecat_steward.slm.config import SLMStage
from pipecat_steward.testing.servers._base import LocalServer, listen_http

if TYPE_CHECKING:
    from pipecat_steward.testing.monitored import run_scenario_monitored

__all__ = [
    "Answer",
    "Delayed",
    "Fail",
    "SLMRequest",
    "ScriptedSLM",
    "VerdictOracle",
    "null_object",
    "run_scenario_monitored",
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


class ScriptedSLM(LocalServer):
    """``POST /v1/chat/completions`` on 127.0.0.1, answered by script or by function.

    ``stop`` takes it down (requests then fail: the SLM is down); ``start`` brings it back on
    the same port.

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
        super().__init__()
        self.script: list[Answer] = list(script)
        self.answer = answer
        self.latency = latency
        self.model = model
        self.requests: list[SLMRequest] = []

    @property
    def base_url(self) -> str:
        """The ``base_url`` of the OpenAI-compatible endpoint."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stage(self, **overrides: Any) -> SLMStage:
        """A resolved stage pointing at this server (``openai_compatible``, ``json_schema``)."""
        fields: dict[str, Any] = {
            "provider": "openai_compatible",
            "model": self.model,
            "base_url": self.base_url,
            "timeout_s": 5.0,
        }
        return SLMStage(**{**fields, **overrides})

    def of_kind(self, kind: str) -> list[SLMRequest]:
        """The requests of one consumer (``adherence``, ``extraction``, ``llm_judge``)."""
        return [r for r in self.requests if r.kind == kind]

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        return await listen_http(stack, app, port)

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
        },
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
    rows = [
        {"step": s, "status": "satisfied", "evidence_ids": ids, "missing": None} for s in satisfied
    ]
    rows += [
        {"step": s, "status": "unsatisfied", "evidence_ids": [], "missing": "not shown"}
        for s in unsatisfied
    ]
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
    for kind, value in (
        ("boolean", True),
        ("integer", 999),
        ("number", 999.0),
        ("string", "invented by the model"),
        ("array", []),
    ):
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
            return {
                k: _invented(v) for k, v in (request.schema or {}).get("properties", {}).items()
            }
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


def __getattr__(name: str) -> Any:
    # The monitored runner plays through Pipecat: it loads on first use, so this module
    # (the scripted server and its oracle) stays free of Pipecat.
    if name == "run_scenario_monitored":
        from pipecat_steward.testing import monitored

        return monitored.run_scenario_monitored
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
