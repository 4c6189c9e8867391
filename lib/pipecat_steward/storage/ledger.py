"""The usage ledger: where every logic_slm call's usage row lands.

:class:`SQLiteLedger` is the default. :meth:`UsageSink.record` never blocks on IO and never
raises: rows go onto a bounded queue that one background thread writes, so a slow disk or a
broken database costs a dropped row and a log line, never a failed call or a late verdict.
The same rows export as JSONL.

Metering is on by default: :func:`default_ledger` is one process-wide SQLite ledger at
``$STEWARD_LEDGER`` (default ``.steward/usage.sqlite`` in the working directory), which
``steward report`` reads. Pass :class:`NullLedger` to meter nowhere on purpose.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Protocol

from pipecat_steward.core.costing import UsageEvent
from pipecat_steward.exceptions import StoreError

__all__ = [
    "LEDGER_ENV",
    "MemoryLedger",
    "NullLedger",
    "SQLiteLedger",
    "UsageSink",
    "default_ledger",
    "default_ledger_path",
    "export_jsonl",
]

LEDGER_ENV = "STEWARD_LEDGER"
"""Where the default usage ledger lives (a SQLite file path)."""

_log = logging.getLogger(__name__)
_FIELDS = tuple(f.name for f in dataclasses.fields(UsageEvent))
_COLUMNS = ", ".join(_FIELDS)
_SQL_TYPES = {"input_tokens": "INTEGER", "output_tokens": "INTEGER", "latency_ms": "REAL"}
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    + ", ".join(f"{name} {_SQL_TYPES.get(name, 'TEXT')}" for name in _FIELDS)
    + ")"
)
_STOP = object()


class UsageSink(Protocol):
    """Anything that accepts usage rows; ``record`` must not block or raise."""

    def record(self, event: UsageEvent) -> None:
        """Accept one row (fire and forget)."""
        ...


class MemoryLedger:
    """Keeps rows in a list: for tests and short scripts."""

    def __init__(self) -> None:
        self.events: list[UsageEvent] = []

    def record(self, event: UsageEvent) -> None:
        """Append the row."""
        self.events.append(event)


class NullLedger:
    """Meters nowhere: for callers that opt out of metering explicitly."""

    def record(self, event: UsageEvent) -> None:
        """Discard the row."""


class SQLiteLedger:
    """Writes rows to a SQLite file from one background thread.

    Args:
        path: The database file (created with its table when missing).
        max_pending: Rows allowed to wait; beyond it new rows are dropped and counted.

    """

    def __init__(self, path: str | Path, *, max_pending: int = 10_000) -> None:
        self.path = Path(path)
        self._dropped = 0
        self._count_lock = threading.Lock()  # both the callers and the writer drop rows
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_pending)
        self._ready = threading.Event()
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="steward-ledger", daemon=True)
        self._thread.start()
        self._ready.wait()

    def record(self, event: UsageEvent) -> None:
        """Queue the row for the writer thread; drop it (and count) when the queue is full."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self._drop()
            _log.warning("usage ledger queue full; dropped a row for %s", event.model)

    @property
    def dropped(self) -> int:
        """Rows lost to a full queue or a failing database."""
        return self._dropped

    def _drop(self) -> None:
        """Count one lost row."""
        with self._count_lock:
            self._dropped += 1

    def flush(self) -> None:
        """Wait until every queued row has been written (or dropped on error)."""
        self._queue.join()

    def close(self) -> None:
        """Write what is queued, then stop the writer thread."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()

    def __enter__(self) -> SQLiteLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def events(self) -> list[UsageEvent]:
        """Read every written row, oldest first (call :meth:`flush` first for fresh rows)."""
        try:
            with sqlite3.connect(self.path) as conn:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM usage_events ORDER BY id").fetchall()
        except sqlite3.Error as err:
            raise StoreError(f"usage ledger {self.path}: cannot read rows: {err}") from err
        return [UsageEvent(**dict(zip(_FIELDS, row, strict=True))) for row in rows]

    def _run(self) -> None:
        """Writer thread: open the database, then write rows until told to stop."""
        conn = self._open()
        self._ready.set()
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    break
                self._write(conn, item)
            finally:
                self._queue.task_done()
        if conn is not None:
            conn.close()

    def _open(self) -> sqlite3.Connection | None:
        """Open the database for the writer; on failure rows will be dropped, not raised."""
        try:
            conn = sqlite3.connect(self.path, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.commit()
            return conn
        except sqlite3.Error as err:
            self._error = err
            _log.error("usage ledger %s unusable (%s); rows will be dropped", self.path, err)
            return None

    def _write(self, conn: sqlite3.Connection | None, item: object) -> None:
        """Insert one row; any database error drops the row with a log line."""
        if conn is None or not isinstance(item, UsageEvent):
            self._drop()
            return
        values = dataclasses.astuple(item)
        try:
            marks = ", ".join("?" for _ in _FIELDS)
            conn.execute(f"INSERT INTO usage_events ({_COLUMNS}) VALUES ({marks})", values)
            conn.commit()
        except sqlite3.Error as err:
            self._drop()
            _log.warning("usage ledger write failed (%s); dropped a row", err)


_DEFAULTS: dict[Path, SQLiteLedger] = {}
_DEFAULTS_LOCK = threading.Lock()


def default_ledger_path() -> Path:
    """``$STEWARD_LEDGER``, else ``.steward/usage.sqlite`` in the working directory."""
    return Path(os.environ.get(LEDGER_ENV) or Path(".steward") / "usage.sqlite")


def default_ledger() -> SQLiteLedger:
    """The process-wide default ledger (created on first use, closed at exit)."""
    path = default_ledger_path().absolute()
    with _DEFAULTS_LOCK:
        found = _DEFAULTS.get(path)
        if found is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            found = _DEFAULTS[path] = SQLiteLedger(path)
            atexit.register(found.close)
        return found


def export_jsonl(events: Iterable[UsageEvent], out: IO[str]) -> int:
    """Write rows as JSON Lines (one object per row); return how many were written."""
    count = 0
    for event in events:
        out.write(json.dumps(dataclasses.asdict(event), sort_keys=True) + "\n")
        count += 1
    return count
