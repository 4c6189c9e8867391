"""The SQLite checkpoint store: the embedded default, one file, no server.

One file, WAL journal, ``synchronous=FULL`` (every commit is fsynced before ``save`` returns,
so a checkpoint survives a SIGKILL or a power cut once ``save`` returned). Saves run
``BEGIN IMMEDIATE`` → read version → write → ``COMMIT``, so the version check and the write are
atomic across threads and processes sharing the file. Every operation runs in a worker thread
(``asyncio.to_thread``): the event loop never waits on the disk.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.checkpoints import contract
from pipecat_steward.storage.checkpoints.base import EncodingStore
from pipecat_steward.storage.checkpoints.contract import Checkpoint, Identity, PayloadKind
from pipecat_steward.storage.sqlite_thread import ThreadedSQLite, connect

__all__ = ["SQLiteCheckpointStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, session_id TEXT NOT NULL,
    version INTEGER NOT NULL, kind TEXT NOT NULL, payload BLOB NOT NULL,
    saved_at REAL NOT NULL, expires_at REAL,
    PRIMARY KEY (tenant_id, agent_id, session_id)
)"""
_USER_VERSION = 0x57E3  # marks a file this store created: a missing table there is damage
_HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'"
_KEY = "tenant_id = ? AND agent_id = ? AND session_id = ?"


class SQLiteCheckpointStore(ThreadedSQLite, EncodingStore):
    """Checkpoints in one SQLite file, safe across threads and processes.

    Args:
        path: The database file (created with its table when missing).
        ttl: Default lifetime of a checkpoint in seconds (``None``: forever).
        clock: Seconds since the epoch; injected by tests.
        busy_timeout: Seconds a writer waits for another process's write lock.
    """

    what = "checkpoint database"

    def __init__(
        self,
        path: str | Path,
        *,
        ttl: float | None = None,
        clock: contract.Clock = contract.system_clock,
        busy_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path)
        self.ttl = ttl
        self.clock = clock
        self._lock = threading.Lock()
        existed = self.path.exists()
        if existed and _stays_empty(self.path):
            raise StoreError(
                f"checkpoint database {self.path} is an empty (0-byte) file, not a database this "
                "store wrote; restore it from a backup, or delete it to start with no calls"
            )
        try:
            self._db = connect(self.path, busy_timeout)
            self._db.execute("PRAGMA synchronous=FULL")
            has_table = self._db.execute(_HAS_TABLE).fetchone() is not None
            ours = self._db.execute("PRAGMA user_version").fetchone()[0] == _USER_VERSION
            if ours and not has_table:
                self._db.close()
                raise StoreError(
                    f"checkpoint database {self.path} has no checkpoints table (dropped, or "
                    "another program's file); restore it from a backup or use another path"
                )
            self._db.execute(_SCHEMA)
            self._db.execute(f"PRAGMA user_version = {_USER_VERSION}")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open checkpoint database {self.path}: {exc}") from exc

    async def load(self, identity: Identity) -> Checkpoint | None:
        return await self._run(lambda: self._load(identity))

    def _load(self, identity: Identity) -> Checkpoint | None:
        row = self._db.execute(
            f"SELECT version, kind, payload, saved_at, expires_at FROM checkpoints WHERE {_KEY}",
            _params(identity),
        ).fetchone()
        if row is None:
            return None
        version, kind, data, saved_at, expires_at = row
        if not (isinstance(saved_at, float | int) and isinstance(expires_at, float | int | None)):
            raise contract.UnreadableCheckpoint(
                f"its times are not numbers ({saved_at!r}, {expires_at!r})"
            )
        if not self._alive(expires_at):
            return None
        blob = data if isinstance(data, bytes) else str(data).encode()
        return Checkpoint(
            identity, version, contract.decode_payload(str(kind), blob), saved_at, expires_at
        )

    async def _write(
        self, identity: Identity, kind: PayloadKind, data: bytes, expected: int, ttl: float | None
    ) -> int:
        return await self._run(lambda: self._save(identity, kind, data, expected, ttl))

    def _save(
        self, identity: Identity, kind: str, data: bytes, expected: int, ttl: float | None
    ) -> int:
        with self._write_transaction():  # the write lock before the version is read
            now = self.clock()
            row = self._db.execute(
                f"SELECT version, expires_at FROM checkpoints WHERE {_KEY}", _params(identity)
            ).fetchone()
            current = row[0] if row is not None and contract.live(row[1], now) else 0
            if current != expected:
                raise contract.VersionConflict(identity, expected, current)
            self._db.execute(
                "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*_params(identity), current + 1, kind, data, now, self._expires(now, ttl)),
            )
        return current + 1

    async def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        return await self._run(lambda: self._list(tenant_id, agent_id))

    def _list(self, tenant_id: str | None, agent_id: str | None) -> tuple[Identity, ...]:
        rows = self._db.execute(
            "SELECT tenant_id, agent_id, session_id FROM checkpoints "
            "WHERE (:tenant IS NULL OR tenant_id = :tenant) AND (:agent IS NULL OR agent_id = :agent) "
            "AND (expires_at IS NULL OR expires_at > :now) ORDER BY tenant_id, agent_id, session_id",
            {"tenant": tenant_id, "agent": agent_id, "now": self.clock()},
        ).fetchall()
        return tuple(Identity(*r) for r in rows)

    async def delete(self, identity: Identity) -> bool:
        return await self._run(lambda: self._delete(identity))

    def _delete(self, identity: Identity) -> bool:
        rows = self._db.execute(  # fetchall: the statement must finish to release the lock
            f"DELETE FROM checkpoints WHERE {_KEY} RETURNING expires_at", _params(identity)
        ).fetchall()
        expires = rows[0][0] if rows else None
        unreadable = not isinstance(expires, float | int | None)  # a damaged row is removed too
        return bool(rows) and (unreadable or self._alive(expires))

    async def purge_expired(self) -> int:
        """Delete expired checkpoints; return how many."""

        def purge() -> int:
            cur = self._db.execute(
                "DELETE FROM checkpoints WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (self.clock(),),
            )
            return cur.rowcount

        return await self._run(purge)

    def pragmas(self) -> dict[str, object]:
        """The durability settings in force (``journal_mode``, ``synchronous``)."""
        with self._lock:
            mode = self._db.execute("PRAGMA journal_mode").fetchone()[0]
            sync = self._db.execute("PRAGMA synchronous").fetchone()[0]
        return {"journal_mode": mode, "synchronous": sync}


def _stays_empty(path: Path) -> bool:
    """True when ``path`` is a 0-byte file that no other process is initialising right now."""
    for _ in range(10):
        if path.stat().st_size > 0:
            return False
        time.sleep(0.05)
    return True


def _params(identity: Identity) -> tuple[str, str, str]:
    return identity.tenant_id, identity.agent_id, identity.session_id
