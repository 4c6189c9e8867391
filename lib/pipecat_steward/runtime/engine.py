"""The session of an agent's engine, chosen once from ``Agent.engine``.

Every host (the Pipecat steward, the speech-to-speech adapter, the direct player, the chaos
harness) builds its session here, so an agent runs on the same engine on every path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypedDict, Unpack

from pipecat_steward.agent.loader import Agent, as_agent
from pipecat_steward.core.slots import Chooser
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.handover import HandoverCallback
from pipecat_steward.runtime.options import check_session_options
from pipecat_steward.runtime.session import Judge, StewardSession
from pipecat_steward.runtime.transactions import TransactionSession

__all__ = ["SessionOptions", "open_session"]


class SessionOptions(TypedDict, total=False):
    """The session options a host passes through to ``StewardSession`` (each optional)."""

    state: SessionState | None
    rng: Chooser | None
    event_data: Mapping[str, Any] | None
    channel: str | None
    judge: Judge | None
    gate_timeout_s: float | None
    checkpointer: Checkpointer | None
    task_timeout_s: float | None
    on_handover: HandoverCallback | None
    client_messages: bool


def open_session(
    agent: Agent | str | Path,
    *,
    clock: Callable[[], str] | None = None,
    call_id: str | None = None,
    **options: Unpack[SessionOptions],
) -> StewardSession:
    """A new session of ``agent``'s engine.

    Args:
        agent: The agent (or its folder); ``agent.engine`` picks the session class.
        clock: Today's date for transactions (ISO); ignored by the slot engine.
        call_id: Scopes a transaction call's idempotency keys; ignored by the slot engine.
        **options: Passed to the session (``state``, ``rng``, ``checkpointer`` …).
    """
    check_session_options({"clock": clock, "call_id": call_id, **options})
    agent = as_agent(agent)
    if agent.engine == "transactions":
        return TransactionSession(agent, clock=clock, call_id=call_id, **options)
    return StewardSession(agent, **options)
