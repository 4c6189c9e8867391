"""Durable sessions: save a session's whole state by conversation identity, restore it first.

``Checkpointer`` binds a checkpoint store to one identity and keeps the version for optimistic
concurrency. It is the one writer of its session: saves are serialised (one store write at a
time, in the order they were asked for) and coalesced (a save still waiting when a newer one
was asked for is covered by the newer write, since every payload is the whole state). So a
turn-boundary save and the save after an executor never race each other, whatever the
backend's latency.

A ``VersionConflict`` therefore means another writer: the checkpointer reloads, and unless the
stored checkpoint is exactly the one it tried to write (its own write whose reply was lost), it
marks itself stale (``conflict``) and re-raises; the session then stops driving the call.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipecat_steward.storage.checkpoints import CheckpointStore, Identity, VersionConflict

__all__ = ["Checkpointer"]


@dataclass
class Checkpointer:
    """One conversation's checkpoint in a store, written by one serialised writer.

    Attributes:
        store: The backend (memory, SQLite, Redis).
        identity: ``(tenant_id, agent_id, session_id)``.
        version: The version this worker last saw (0: nothing saved yet).
        saves: How many store writes this worker made.
        coalesced: How many save requests a later write covered (no write of their own).
        conflict: The conflict that made this worker stale (None while it owns the call).
        writer: This worker's token, saved in every payload (``writer``) so that after a
            conflict it can tell its own landed write from another worker's.
    """

    store: CheckpointStore
    identity: Identity
    version: int = 0
    saves: int = 0
    coalesced: int = 0
    conflict: VersionConflict | None = None
    writer: str = field(default_factory=lambda: uuid.uuid4().hex)
    _asked: int = field(default=0, repr=False)
    _written: int = field(default=0, repr=False)
    _latest: dict[str, Any] = field(default_factory=lambda: {}, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    async def load(self) -> dict[str, Any] | None:
        """Return the saved payload (and remember its version), or None for a new call."""
        checkpoint = await self.store.load(self.identity)
        if checkpoint is None:
            return None
        self.version = checkpoint.version
        return dict(cast(Mapping[str, Any], checkpoint.payload))

    async def save(self, payload: Mapping[str, Any]) -> int:
        """Save ``payload`` (a snapshot taken now) after any write in flight; return the version.

        Raises:
            VersionConflict: When another writer advanced the call (also on every save after).
        """
        if self.conflict is not None:
            raise self.conflict
        self._asked += 1
        ticket, self._latest = self._asked, {**payload, "writer": self.writer}
        async with self._lock:
            if self.conflict is not None:
                raise self.conflict
            if self._written >= ticket:  # a newer snapshot was written while this one waited
                self.coalesced += 1
                return self.version
            upto, latest = self._asked, self._latest
            await self._write(latest)
            self._written = upto
        return self.version

    async def _write(self, payload: dict[str, Any]) -> None:
        try:
            self.version = await self.store.save(self.identity, payload, self.version)
        except VersionConflict as exc:
            if not await self._recover(payload):
                self.conflict = exc
                raise
        self.saves += 1

    async def _recover(self, payload: dict[str, Any]) -> bool:
        """After a conflict: True when no other writer advanced the call (and it is saved)."""
        stored = await self.store.load(self.identity)
        if stored is not None:  # ours only if it is exactly what we wrote (a lost reply)
            self.version = stored.version if stored.payload == payload else self.version
            return stored.payload == payload
        try:  # expired or deleted, not advanced by anyone: write it afresh
            self.version = await self.store.save(self.identity, payload, 0)
        except VersionConflict:
            return False
        return True
