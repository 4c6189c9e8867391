"""A synchronous face for any checkpoint store, for scripts and the synchronous simulator.

It owns a private event loop (``asyncio.Runner``) and runs each call to completion on it, so
an async client (Redis) stays bound to one loop. Do not use it inside a running event loop:
there, await the store directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from pipecat_steward.storage.checkpoints.contract import CheckpointStore

__all__ = ["BlockingCheckpointStore"]

P = ParamSpec("P")
T = TypeVar("T")


class BlockingCheckpointStore:
    """Wrap ``store`` with blocking ``load``/``save``/``list``/``delete``/``close``.

    Each method takes the arguments of the store's async method of the same name and returns
    its result (``save`` raises ``VersionConflict`` on a stale version, as the store does).

    Attributes:
        store: The wrapped async store.
    """

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self._runner = asyncio.Runner()
        self.load = self._blocking(store.load)
        self.save = self._blocking(store.save)
        self.list = self._blocking(store.list)
        self.delete = self._blocking(store.delete)

    def _blocking(self, method: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
        """``method`` as a blocking call, run to completion on the private event loop."""

        def call(*args: P.args, **kwargs: P.kwargs) -> T:
            return self._runner.run(method(*args, **kwargs))

        return call

    def close(self) -> None:
        """Close the store and the private event loop."""
        try:
            self._runner.run(self.store.close())
        finally:
            self._runner.close()

    def __enter__(self) -> BlockingCheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
