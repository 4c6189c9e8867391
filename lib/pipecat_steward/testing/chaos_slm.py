"""A chaotic logic_slm: a small model that lies, returns garbage, stalls or errors.

``check_monitored`` replays a chaos conversation through the real pipeline with the monitor and
the extractor attached to a ``ScriptedSLM`` whose every answer is drawn from a seeded mix of
lies (every asked step satisfied, with invented evidence), garbage text, HTTP errors, late
answers and honest null objects. Nothing may escape, every spoken turn must be answered, and the
canary must appear in no request to the small model, no ledger row and no trace.
"""

from __future__ import annotations

import json
import random
import re

from pipecat_steward.agent.loader import Agent
from pipecat_steward.storage.ledger import MemoryLedger
from pipecat_steward.testing.chaos import PlayedConversation, without_delays
from pipecat_steward.testing.chaos_invariants import Violation
from pipecat_steward.testing.scripted_slm import (
    Answer,
    Delayed,
    Fail,
    ScriptedSLM,
    SLMRequest,
    null_object,
    run_scenario_monitored,
    verdict,
)

__all__ = ["ChaosSLM", "check_monitored"]

_ASKED = re.compile(r"^- (\w+): ", re.M)


class ChaosSLM:
    """Answers a logic_slm request at random: a lie, garbage, an error, a stall or nothing."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, request: SLMRequest) -> Answer:
        r = self.rng
        move = r.choices(["lie", "garbage", "error", "late", "null"], weights=[30, 20, 15, 10, 25])[
            0
        ]
        if move == "lie":
            return self._lie(request)
        if move == "garbage":
            return r.choice(["{not json", "", "null", '{"satisfied": "everything"}', "[]"])
        if move == "error":
            return Fail(r.choice([429, 500, 503]))
        if move == "late":
            return Delayed(self._lie(request), r.choice([0.2, 0.5]))
        return null_object(request)

    def _lie(self, request: SLMRequest) -> Answer:
        if request.kind == "llm_judge":
            return {"allow": True}
        if request.kind == "extraction":
            return {k: "ABC-1234" for k in null_object(request)}
        return verdict(_ASKED.findall(request.user), evidence=["e999"])


async def check_monitored(agent: Agent, conversation: PlayedConversation) -> list[Violation]:
    """Replay ``conversation`` with the monitor and extractor on a chaotic logic_slm."""
    scenario = without_delays(conversation.scenario).model_copy(deep=True)
    if conversation.error is not None or "aux" not in agent.raw:
        return []
    ledger = MemoryLedger()
    async with ScriptedSLM(answer=ChaosSLM(random.Random(scenario.seed))) as slm:
        try:
            traces, _, _ = await run_scenario_monitored(agent, scenario, slm, ledger=ledger)
        except Exception as exc:
            return [
                Violation("escaped_exception", 0, f"with a chaotic logic_slm: {exc!r}"[:200], "slm")
            ]
        found: list[Violation] = []
        canary = conversation.canary
        for request in slm.requests:
            if canary and canary in json.dumps(request.body, default=str):
                found.append(Violation("sensitive_leak", 0, "canary in a logic_slm request", "slm"))
                break
    if canary and any(canary in repr(event) for event in ledger.events):
        found.append(Violation("sensitive_leak", 0, "canary in a ledger row", "slm"))
    for trace in traces:
        body = json.dumps({k: v for k, v in trace.items() if k != "user"}, default=str)
        if canary and canary in body:
            found.append(
                Violation("sensitive_leak", int(trace["turn"]), "canary in a trace", "slm")
            )
        if not trace["bot"] and trace["status"] == "in_progress" and str(trace["user"]).strip():
            found.append(Violation("unanswered_turn", int(trace["turn"]), "no reply", "slm"))
    return found
