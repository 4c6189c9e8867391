"""Open a checkpoint store from a one-line spec (``--store`` on the command line)."""

from __future__ import annotations

from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.checkpoints.contract import CheckpointStore, Clock, system_clock

__all__ = ["open_store"]

_FORMS = "memory:, sqlite:PATH or redis://HOST:PORT/DB"


def open_store(
    spec: str, *, ttl: float | None = None, clock: Clock = system_clock
) -> CheckpointStore:
    """Open the store ``spec`` names: ``memory:``, ``sqlite:PATH`` or ``redis://…``.

    Raises:
        StoreError: When the spec names no known backend (the message lists the forms).
    """
    if spec in ("memory", "memory:"):
        from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore

        return MemoryCheckpointStore(ttl=ttl, clock=clock)
    if spec.startswith("sqlite:") and len(spec) > len("sqlite:"):
        from pipecat_steward.storage.checkpoints.sqlite import SQLiteCheckpointStore

        return SQLiteCheckpointStore(spec.removeprefix("sqlite:"), ttl=ttl, clock=clock)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from pipecat_steward.storage.checkpoints.redis_store import RedisCheckpointStore

        return RedisCheckpointStore(spec, ttl=ttl, clock=clock)
    raise StoreError(f"unknown checkpoint store {spec!r}; use {_FORMS}")
