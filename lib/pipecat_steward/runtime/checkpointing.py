"""Durable sessions: save a session's whole state by conversation identity, restore it first.

``Checkpointer`` binds a checkpoint store to one identity and keeps the version for optimistic
concurrency. It is the one writer of its session: saves are serialised (one store write at a
time, in the order they were asked for) and coalesced (a save still waiting when a newer one
was asked for is covered by the newer write, since every payload is the whole state). So a
turn-boundary save and the save after an executor never race each other, whatever the
backend's latency.

A restore validates what it loads (``load(check)``): a checkpoint that cannot be restored
either fails with one ``InvalidCheckpoint`` naming the session, the store and the problem
(``on_invalid="fail"``, the default) or, with ``on_invalid="fresh"``, is logged as a warning,
deleted and the call starts afresh. Only an expired checkpoint is absent without a word.

A ``VersionConflict`` therefore means another writer: the checkpointer reloads, and unless the
stored checkpoint is exactly the one it tried to write (its own write whose reply was lost), it
marks itself stale (``conflict``) and re-raises; the session then stops driving the call.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from loguru import logger

from pipecat_steward.runtime.checkpoint_schema import MAX_COUNT
from pipecat_steward.storage.checkpoints import (
    Checkpoint,
    CheckpointStore,
    Identity,
    InvalidCheckpoint,
    UnreadableCheckpoint,
    VersionConflict,
)

__all__ = ["Checkpointer", "OnInvalid", "PayloadCheck"]

OnInvalid = Literal["fail", "fresh"]
"""What a restore does with a checkpoint it cannot restore: raise, or start the call afresh."""

PayloadCheck = Callable[[Mapping[str, Any]], str | None]
"""Returns why a loaded payload cannot be restored, or None."""


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
        on_invalid: ``fail`` (raise ``InvalidCheckpoint``) or ``fresh`` (warn, delete, start
            afresh) when a loaded checkpoint cannot be restored.
        writer: This worker's token, saved in every payload (``writer``) so that after a
            conflict it can tell its own landed write from another worker's.
    """

    store: CheckpointStore
    identity: Identity
    version: int = 0
    saves: int = 0
    coalesced: int = 0
    conflict: VersionConflict | None = None
    on_invalid: OnInvalid = "fail"
    writer: str = field(default_factory=lambda: uuid.uuid4().hex)
    _asked: int = field(default=0, repr=False)
    _written: int = field(default=0, repr=False)
    _latest: dict[str, Any] = field(default_factory=lambda: {}, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    async def load(self, check: PayloadCheck | None = None) -> dict[str, Any] | None:
        """Return the saved payload (and remember its version), or None for a new call.

        Args:
            check: Says why a payload cannot be restored (the session's schema check).

        Raises:
            InvalidCheckpoint: When the checkpoint cannot be restored and ``on_invalid`` is
                ``fail``. With ``fresh`` the checkpoint is deleted and None returned.
        """
        try:
            checkpoint = await self.store.load(self.identity)
        except UnreadableCheckpoint as exc:
            return await self.reject(str(exc))
        if checkpoint is None:
            return None
        payload = checkpoint.payload
        problem = _version_problem(checkpoint)
        if problem is None and not isinstance(payload, dict):
            problem = f"the payload is {type(payload).__name__}, not a JSON object"
        elif problem is None and check is not None:
            problem = check(cast(dict[str, Any], payload))
        if problem is not None:
            return await self.reject(problem)
        self.version = checkpoint.version
        return dict(cast(dict[str, Any], payload))

    async def reject(self, problem: str) -> None:
        """Apply ``on_invalid`` to a checkpoint that cannot be restored because of ``problem``.

        Raises:
            InvalidCheckpoint: Under ``fail``.
        """
        error = InvalidCheckpoint(self.identity, describe(self.store), problem)
        if self.on_invalid == "fail":
            raise error
        logger.warning(f"starting call {self.identity} afresh (on_invalid='fresh'): {error}")
        await self.store.delete(self.identity)
        self.version = 0

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


def _version_problem(checkpoint: Checkpoint) -> str | None:
    version = checkpoint.version
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < MAX_COUNT:  # pyright: ignore[reportUnnecessaryIsInstance]
        return f"its version {version!r} is not an integer from 1 to 2**53"
    return None


def describe(store: CheckpointStore) -> str:
    """The store, named for an error message (its file for SQLite, its server for Redis)."""
    where = getattr(store, "path", None)
    if where is None:
        pool = getattr(getattr(store, "client", None), "connection_pool", None)
        kwargs = getattr(pool, "connection_kwargs", {})
        if kwargs:
            where = f"{kwargs.get('host', '')}:{kwargs.get('port', '')}/{kwargs.get('db', 0)}"
    return f"{type(store).__name__}({where})" if where is not None else type(store).__name__
