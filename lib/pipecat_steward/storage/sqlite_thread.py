"""Run SQLite work from worker threads on one shared connection, one statement batch at a time.

The SQLite stores (checkpoints, events) share this: every operation runs in a worker thread
(``asyncio.to_thread``) under one lock, so the event loop never waits on the disk, and an SQLite
error rolls back the open transaction and leaves as a ``StoreError`` naming the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar, TypeVar

from pipecat_steward.exceptions import StoreError

__all__ = ["ThreadedSQLite", "connect"]

T = TypeVar("T")


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """Open ``path`` in autocommit mode with a WAL journal, for use from any thread.

    Args:
        path: The database file.
        busy_timeout: Seconds a writer waits for another process's write lock.
    """
    db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    return db


class ThreadedSQLite:
    """The base of a store on one SQLite connection shared by worker threads.

    Attributes:
        path: The database file.
        what: What the file holds, for error messages (``"event database"``).
    """

    what: ClassVar[str]
    path: Path
    _db: sqlite3.Connection
    _lock: threading.Lock

    @contextlib.contextmanager
    def _write_transaction(self) -> Iterator[None]:
        """One write transaction, committed, or rolled back on any error (run it in ``_run``).

        The write lock is taken first (another process's writer waits), so what the body reads
        is still so when it writes: a version or a writer claim checked, then the write.
        """
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.to_thread(self._locked, fn)

    def _locked(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` under the lock; an SQLite error rolls back and becomes a ``StoreError``."""
        with self._lock:
            try:
                return fn()
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"{self.what} {self.path} failed: {exc}") from exc

    async def close(self) -> None:
        """Close the connection (the store is unusable afterwards)."""
        await self._run(self._db.close)
