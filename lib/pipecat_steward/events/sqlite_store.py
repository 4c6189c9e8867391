"""Conversation events in SQLite: the embedded default (the checkpoint file can hold them too).

One row per event, keyed by ``(session, seq)``; a second table remembers each session's agent
and start so the list of past calls reads newest first without scanning events, and a third
each session's latest writer claim (checked in the transaction that writes). WAL journal;
every operation runs in a worker thread, so the event loop never waits on the disk.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from pipecat_steward.events.schema import CallStarted, Event
from pipecat_steward.events.store import (
    SessionSummary,
    WriterClaim,
    check_writer,
    decode,
    encode,
)
from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.sqlite_thread import ThreadedSQLite, connect

__all__ = ["SQLiteEventStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS steward_events (session TEXT NOT NULL, seq INTEGER NOT NULL, "
    "kind TEXT NOT NULL, t REAL NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session, seq))",
    "CREATE TABLE IF NOT EXISTS steward_event_sessions (session TEXT PRIMARY KEY, "
    "agent TEXT NOT NULL, started_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS steward_event_writers (session TEXT PRIMARY KEY, "
    "writer INTEGER NOT NULL)",
)


class SQLiteEventStore(ThreadedSQLite):
    """Events in one SQLite file, safe across threads and processes.

    Args:
        path: The database file (created with its tables when missing).
        busy_timeout: Seconds a writer waits for another process's write lock.
    """

    what = "event database"

    def __init__(self, path: str | Path, *, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self._db = connect(self.path, busy_timeout)
            for statement in _SCHEMA:
                self._db.execute(statement)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open event database {self.path}: {exc}") from exc

    async def claim(self, session: str) -> WriterClaim:
        return await self._run(lambda: self._claim(session))

    def _claim(self, session: str) -> WriterClaim:
        with self._write_transaction():
            writer = self._writer(session) + 1
            self._db.execute(
                "INSERT OR REPLACE INTO steward_event_writers VALUES (?, ?)", (session, writer)
            )
            (last,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM steward_events WHERE session = ?", (session,)
            ).fetchone()
        return WriterClaim(writer, int(last) + 1)

    async def append(self, events: Sequence[Event], writer: int | None = None) -> None:
        await self._run(lambda: self._append(events, writer))

    def _append(self, events: Sequence[Event], writer: int | None) -> None:
        with self._write_transaction():
            for session in {event.session for event in events}:
                check_writer(session, writer, self._writer(session))
            self._insert(events)

    def _writer(self, session: str) -> int:
        row = self._db.execute(
            "SELECT writer FROM steward_event_writers WHERE session = ?", (session,)
        ).fetchone()
        return int(row[0]) if row else 0

    def _insert(self, events: Sequence[Event]) -> None:
        for event in events:
            self._db.execute(
                "INSERT OR REPLACE INTO steward_events VALUES (?, ?, ?, ?, ?)",
                (event.session, event.seq, event.kind, event.t, encode(event)),
            )
            if isinstance(event, CallStarted):
                self._db.execute(
                    "INSERT OR REPLACE INTO steward_event_sessions VALUES (?, ?, ?)",
                    (event.session, event.agent, event.started_at),
                )

    async def read(self, session: str, after: int = 0) -> list[Event]:
        rows = await self._run(
            lambda: self._db.execute(
                "SELECT data FROM steward_events WHERE session = ? AND seq > ? ORDER BY seq",
                (session, after),
            ).fetchall()
        )
        return decode([r[0] for r in rows])

    async def sessions(self, limit: int = 100) -> list[SessionSummary]:
        rows = await self._run(
            lambda: self._db.execute(
                "SELECT e.session, COALESCE(s.agent, ''), COALESCE(s.started_at, 0), COUNT(*), "
                "MAX(e.t) FROM steward_events e LEFT JOIN steward_event_sessions s "
                "ON s.session = e.session GROUP BY e.session "
                "ORDER BY COALESCE(s.started_at, 0) DESC, e.session LIMIT ?",
                (limit,),
            ).fetchall()
        )
        return [
            SessionSummary(str(r[0]), str(r[1]), float(r[2]), int(r[3]), float(r[4])) for r in rows
        ]
