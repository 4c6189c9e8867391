"""Run SQLite work from worker threads on one shared connection, one statement batch at a time."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import TypeVar

from pipecat_steward.exceptions import StoreError

__all__ = ["run_locked"]

T = TypeVar("T")


def run_locked(db: sqlite3.Connection, lock: threading.Lock, fn: Callable[[], T], what: str) -> T:
    """Run ``fn`` under ``lock``; an SQLite error rolls back and becomes a ``StoreError``.

    Args:
        db: The shared connection (``check_same_thread=False``).
        lock: Serialises users of ``db``.
        fn: The work.
        what: Names the database in the error (e.g. ``"event database events.db"``).
    """
    with lock:
        try:
            return fn()
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"{what} failed: {exc}") from exc
