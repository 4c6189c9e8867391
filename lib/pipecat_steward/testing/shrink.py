"""Shrink a chaos counterexample to a minimal scenario that still breaks the same invariant.

Greedy delta debugging over the scenario file: drop caller turns, then the model's inferences,
calls, texts and arguments, then faults and host writes, keeping each cut while the violation
holds. The result is written in the format of ``docs/scenarios.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import yaml

from pipecat_steward.agent.loader import Agent
from pipecat_steward.testing.chaos import play
from pipecat_steward.testing.chaos_invariants import (
    Violation,
    check,
    check_agreement,
    check_resume,
)
from pipecat_steward.testing.chaos_slm import check_monitored
from pipecat_steward.testing.scenario import Scenario

__all__ = ["shrink", "violations_of", "write_scenario"]

Holds = Callable[[Scenario], Awaitable[bool]]


async def violations_of(
    agent: Agent, scenario: Scenario, invariant: str = "", *, slm: bool = False
) -> list[Violation]:
    """Replay ``scenario`` and return its violations (path and logic_slm checks when asked)."""
    conversation = await play(agent, scenario.model_copy(deep=True))
    found = check(agent, conversation)
    if slm:
        found += await check_monitored(agent, conversation)
    if invariant == "resume_divergence":
        for cut in range(1, len(conversation.traces)):
            found += await check_resume(agent, conversation, cut)
    if invariant == "path_disagreement":
        found += await check_agreement(agent, conversation)
        found += await check_agreement(agent, conversation, s2s=True)
    return found


async def shrink(
    agent: Agent,
    scenario: Scenario,
    key: str,
    *,
    budget: int = 200,
    holds: Holds | None = None,
) -> Scenario:
    """The smallest variant of ``scenario`` found that still has a violation of class ``key``.

    ``holds`` replaces the check (any property of a scenario to keep while cutting).
    """
    invariant = key.split("-", 1)[0]

    async def violated(candidate: Scenario) -> bool:
        found = await violations_of(agent, candidate, invariant, slm=key.endswith("-slm"))
        return any(v.key == key for v in found)

    holds = holds or violated

    best = scenario.model_copy(deep=True)
    improved = True
    while improved and budget > 0:
        improved = False
        for candidate in _candidates(best):
            budget -= 1
            if await holds(candidate):
                best, improved = candidate, True
                break
            if budget <= 0:
                break
    return best


def _candidates(scenario: Scenario) -> Iterator[Scenario]:
    """Every one-step simplification of ``scenario``, biggest cuts first."""
    turns = scenario.turns
    for i in reversed(range(len(turns))):
        if len(turns) > 1:
            yield _edit(scenario, lambda s, i=i: s.turns.pop(i))
    for i, turn in enumerate(turns):
        if len(turn.user) > 40:  # a very long turn: try either half
            half = len(turn.user) // 2
            yield _edit(
                scenario, lambda s, i=i, h=half: setattr(s.turns[i], "user", s.turns[i].user[h:])
            )
            yield _edit(
                scenario, lambda s, i=i, h=half: setattr(s.turns[i], "user", s.turns[i].user[:h])
            )
        if turn.variables:
            yield _edit(scenario, lambda s, i=i: s.turns[i].variables.clear())
        for j, inference in enumerate(turn.llm):
            yield _edit(scenario, lambda s, i=i, j=j: s.turns[i].llm.pop(j))
            if inference.say and inference.calls:
                yield _edit(scenario, lambda s, i=i, j=j: setattr(s.turns[i].llm[j], "say", None))
            for k, call in enumerate(inference.calls):
                yield _edit(scenario, lambda s, i=i, j=j, k=k: s.turns[i].llm[j].calls.pop(k))
                for key in call.args:
                    yield _edit(
                        scenario,
                        lambda s, i=i, j=j, k=k, key=key: s.turns[i].llm[j].calls[k].args.pop(key),
                    )
    for tool in list(scenario.backend):
        yield _edit(scenario, lambda s, tool=tool: s.backend.pop(tool))


def _edit(scenario: Scenario, change: Callable[[Scenario], object]) -> Scenario:
    copy = scenario.model_copy(deep=True)
    change(copy)
    return copy


def write_scenario(path: Path, scenario: Scenario, violation: Violation) -> Path:
    """Write ``scenario`` as a scenario file naming the invariant it breaks."""
    named = scenario.model_copy(
        update={
            "name": path.stem,
            "description": f"chaos counterexample: {violation.key} (turn {violation.turn}): "
            f"{violation.detail}",
        }
    )
    data = named.model_dump(exclude_defaults=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
    return path
