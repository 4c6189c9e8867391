"""A synchronous face for any checkpoint store, for scripts and the synchronous simulator.

It owns a private event loop (``asyncio.Runner``) and runs each call to completion on it, so
an async client (Redis) stays bound to one loop. Do not use it inside a running event loop:
there, await the store directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from pipecat_steward.storage.checkpoints.contract import (
    Checkpoint,
    CheckpointStore,
    Identity,
    Payload,
)

__all__ = ["BlockingCheckpointStore"]

T = TypeVar("T")


class BlockingCheckpointStore:
    """Wrap ``store`` with blocking ``load``/``save``/``list``/``delete``/``close``."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._runner = asyncio.Runner()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro)

    def load(self, identity: Identity) -> Checkpoint | None:
        """Blocking ``CheckpointStore.load``."""
        return self._run(self.store.load(identity))

    def save(
        self,
        identity: Identity,
        payload: Payload,
        expected_version: int,
        *,
        ttl: float | None = None,
    ) -> int:
        """Blocking ``CheckpointStore.save`` (raises ``VersionConflict`` on a stale version)."""
        return self._run(self.store.save(identity, payload, expected_version, ttl=ttl))

    def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        """Blocking ``CheckpointStore.list``."""
        return self._run(self.store.list(tenant_id, agent_id))

    def delete(self, identity: Identity) -> bool:
        """Blocking ``CheckpointStore.delete``."""
        return self._run(self.store.delete(identity))

    def close(self) -> None:
        """Close the store and the private event loop."""
        try:
            self._run(self.store.close())
        finally:
            self._runner.close()

    def __enter__(self) -> BlockingCheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
