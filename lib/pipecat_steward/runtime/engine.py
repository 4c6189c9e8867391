"""The session of an agent's engine, chosen once from ``Agent.engine``.

Every host (the Pipecat steward, the speech-to-speech adapter, the direct player, the chaos
harness) builds its session here, so an agent runs on the same engine on every path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.runtime.transactions import TransactionSession

__all__ = ["open_session"]


def open_session(
    agent: Agent,
    *,
    clock: Callable[[], str] | None = None,
    call_id: str | None = None,
    **options: Any,
) -> StewardSession:
    """A new session of ``agent``'s engine.

    Args:
        agent: The loaded agent; ``agent.engine`` picks the session class.
        clock: Today's date for transactions (ISO); ignored by the slot engine.
        call_id: Scopes a transaction call's idempotency keys; ignored by the slot engine.
        **options: Passed to the session (``state``, ``rng``, ``checkpointer`` …).
    """
    if agent.engine == "transactions":
        return TransactionSession(agent, clock=clock, call_id=call_id, **options)
    return StewardSession(agent, **options)
