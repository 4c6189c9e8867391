"""The in-memory checkpoint store: one process, for tests and single-call scripts."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from pipecat_steward.storage.checkpoints import contract
from pipecat_steward.storage.checkpoints.base import EncodingStore
from pipecat_steward.storage.checkpoints.contract import Checkpoint, Identity, PayloadKind

__all__ = ["MemoryCheckpointStore"]


@dataclass(frozen=True, slots=True)
class _Row:
    version: int
    kind: PayloadKind
    data: bytes
    saved_at: float
    expires_at: float | None


class MemoryCheckpointStore(EncodingStore):
    """Checkpoints in a dict. Payloads are stored encoded, so a loaded dict is a fresh copy.

    Args:
        ttl: Default lifetime of a checkpoint in seconds (``None``: forever).
        clock: Seconds since the epoch; injected by tests.
    """

    def __init__(
        self, *, ttl: float | None = None, clock: contract.Clock = contract.system_clock
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._rows: dict[Identity, _Row] = {}
        self._lock = threading.Lock()  # BlockingCheckpointStore may call from another thread

    def _live(self, identity: Identity, now: float) -> _Row | None:
        row = self._rows.get(identity)
        return row if row is not None and contract.live(row.expires_at, now) else None

    async def load(self, identity: Identity) -> Checkpoint | None:
        with self._lock:
            row = self._live(identity, self.clock())
        if row is None:
            return None
        payload = contract.decode_payload(row.kind, row.data)
        return Checkpoint(identity, row.version, payload, row.saved_at, row.expires_at)

    async def _write(
        self, identity: Identity, kind: PayloadKind, data: bytes, expected: int, ttl: float | None
    ) -> int:
        with self._lock:
            now = self.clock()
            row = self._live(identity, now)
            current = row.version if row is not None else 0
            if current != expected:
                raise contract.VersionConflict(identity, expected, current)
            self._rows[identity] = _Row(current + 1, kind, data, now, self._expires(now, ttl))
            return current + 1

    async def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        with self._lock:
            now = self.clock()
            found = [i for i in self._rows if self._live(i, now) is not None]
        return tuple(sorted(i for i in found if i.belongs_to(tenant_id, agent_id)))

    async def delete(self, identity: Identity) -> bool:
        with self._lock:
            was_live = self._live(identity, self.clock()) is not None
            self._rows.pop(identity, None)
            return was_live

    async def purge_expired(self) -> int:
        """Drop expired checkpoints; return how many."""
        with self._lock:
            now = self.clock()
            dead = [i for i, r in self._rows.items() if not contract.live(r.expires_at, now)]
            for identity in dead:
                del self._rows[identity]
            return len(dead)

    async def close(self) -> None:
        return None
