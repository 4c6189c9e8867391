"""Durable sessions: save a session's whole state by conversation identity, restore it first.

``Checkpointer`` binds a checkpoint store to one identity and keeps the version for optimistic
concurrency: a stale writer (another worker took the call over) gets ``VersionConflict`` and
must stop driving the call. The payload is plain JSON built by the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pipecat_steward.storage.checkpoints import CheckpointStore, Identity

__all__ = ["Checkpointer"]


@dataclass
class Checkpointer:
    """One conversation's checkpoint in a store.

    Attributes:
        store: The backend (memory, SQLite, Redis).
        identity: ``(tenant_id, agent_id, session_id)``.
        version: The version this worker last saw (0: nothing saved yet).
        saves: How many saves this worker made.
    """

    store: CheckpointStore
    identity: Identity
    version: int = 0
    saves: int = 0

    async def load(self) -> dict[str, Any] | None:
        """Return the saved payload (and remember its version), or None for a new call."""
        checkpoint = await self.store.load(self.identity)
        if checkpoint is None:
            return None
        self.version = checkpoint.version
        return dict(cast(Mapping[str, Any], checkpoint.payload))

    async def save(self, payload: Mapping[str, Any]) -> int:
        """Save ``payload`` over the version last seen; raises ``VersionConflict`` if stale."""
        self.version = await self.store.save(self.identity, dict(payload), self.version)
        self.saves += 1
        return self.version
