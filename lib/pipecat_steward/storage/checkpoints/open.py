"""Open a checkpoint store from a one-line spec (``--store`` on the command line)."""

from __future__ import annotations

from pipecat_steward.storage.checkpoints.contract import CheckpointStore, Clock, system_clock
from pipecat_steward.storage.spec import parse_store_spec

__all__ = ["open_store"]


def open_store(
    spec: str, *, ttl: float | None = None, clock: Clock = system_clock
) -> CheckpointStore:
    """Open the store ``spec`` names: ``memory:``, ``sqlite:PATH`` or ``redis://…``.

    Raises:
        StoreError: When the spec names no known backend (the message lists the forms), or
            its database cannot be opened.
    """
    kind, target = parse_store_spec(spec, "checkpoint")
    if kind == "memory":
        from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore

        return MemoryCheckpointStore(ttl=ttl, clock=clock)
    if kind == "sqlite":
        from pipecat_steward.storage.checkpoints.sqlite import SQLiteCheckpointStore

        return SQLiteCheckpointStore(target, ttl=ttl, clock=clock)
    from pipecat_steward.storage.checkpoints.redis_store import RedisCheckpointStore

    return RedisCheckpointStore(target, ttl=ttl, clock=clock)
