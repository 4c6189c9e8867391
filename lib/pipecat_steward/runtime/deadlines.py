"""How long one call of an agent's function may take before it takes its failure path.

Every entry that runs an agent function — a flow task's executor, an intent's pre-validation or
executor, a tool the model calls, an exit call — is bounded by the same rule: the session's
override first, else the deadline of the flow task the function executes (``timeout_s``), else
the tasks' default. On expiry the call is answered with a ``timeout`` error, its late result is
ignored, and the trace records a ``tool_timeout`` event.
"""

from __future__ import annotations

from pipecat_steward.agent.loader import Agent
from pipecat_steward.core.slots.config import TaskConfig

__all__ = ["DEFAULT_DEADLINE_S", "deadline"]

DEFAULT_DEADLINE_S: float = float(TaskConfig.model_fields["timeout_s"].default)
"""A task's deadline when it sets none, and the deadline of every function no task names."""


def deadline(
    agent: Agent, tool: str, *, task: str | None = None, override: float | None = None
) -> float:
    """Seconds one call of ``tool`` may take (``task``: the flow task it runs for, when known)."""
    if override is not None:
        return override
    names = [task] if task else list(agent.flow.executors.get(tool, ()))
    tasks = [agent.flow.task[n] for n in names if n in agent.flow.task]
    return tasks[0].config.timeout_s if tasks else DEFAULT_DEADLINE_S
