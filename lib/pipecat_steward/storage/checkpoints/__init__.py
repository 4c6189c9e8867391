"""Checkpoint stores: one checkpoint per conversation identity, optimistic concurrency, expiry.

Backends: :class:`MemoryCheckpointStore` (tests), :class:`SQLiteCheckpointStore` (the embedded
default: one file, WAL, fsynced commits) and ``RedisCheckpointStore`` (several workers; import
it from ``pipecat_steward.storage.checkpoints.redis_store``, it needs the ``redis`` extra).
All are async; :class:`BlockingCheckpointStore` wraps any of them for synchronous callers.
"""

from pipecat_steward.storage.checkpoints.blocking import BlockingCheckpointStore
from pipecat_steward.storage.checkpoints.contract import (
    Checkpoint,
    CheckpointStore,
    Clock,
    Identity,
    InvalidCheckpoint,
    Payload,
    UnreadableCheckpoint,
    VersionConflict,
    system_clock,
)
from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore
from pipecat_steward.storage.checkpoints.open import open_store
from pipecat_steward.storage.checkpoints.sqlite import SQLiteCheckpointStore

__all__ = [
    "BlockingCheckpointStore",
    "Checkpoint",
    "CheckpointStore",
    "Clock",
    "Identity",
    "InvalidCheckpoint",
    "MemoryCheckpointStore",
    "Payload",
    "SQLiteCheckpointStore",
    "UnreadableCheckpoint",
    "VersionConflict",
    "open_store",
    "system_clock",
]
