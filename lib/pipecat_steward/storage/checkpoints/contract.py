"""The checkpoint-store contract every backend keeps: identity, checkpoint, protocol, conflicts.

A store keeps one checkpoint per conversation identity ``(tenant_id, agent_id, session_id)``.
Every save names the version it read (``expected_version``; 0 = "none yet") and gets the next
one back; a stale writer gets :class:`VersionConflict` (a ``ConflictError``). Checkpoints may
expire: a TTL given at construction or per save, measured on an injected clock. An expired
checkpoint is absent for every operation.

The API is async: the Pipecat seam runs in an event loop and must never block on a disk or a
network. :class:`~pipecat_steward.storage.checkpoints.blocking.BlockingCheckpointStore` wraps
any store for synchronous callers (scripts, the simulator).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast
from urllib.parse import quote

from pipecat_steward.exceptions import ConflictError, StoreError

__all__ = [
    "Checkpoint",
    "CheckpointStore",
    "Clock",
    "Identity",
    "InvalidCheckpoint",
    "Payload",
    "PayloadKind",
    "UnreadableCheckpoint",
    "VersionConflict",
    "decode_payload",
    "encode_payload",
    "expiry",
    "system_clock",
]

Payload = str | bytes | dict[str, Any]
PayloadKind = Literal["text", "bytes", "json"]
Clock = Callable[[], float]
"""Seconds since the epoch (``time.time`` by default; tests inject a fake)."""


def system_clock() -> float:
    """The default clock: ``time.time()``."""
    return time.time()


@dataclass(frozen=True, slots=True, order=True)
class Identity:
    """A conversation's identity: the checkpoint key (tenant, agent, conversation).

    Raises:
        StoreError: When a part is empty or holds a NUL character.
    """

    tenant_id: str
    agent_id: str
    session_id: str

    def __post_init__(self) -> None:
        for name in ("tenant_id", "agent_id", "session_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or "\x00" in value:
                raise StoreError(
                    f"Identity.{name} must be a non-empty string without NUL, got {value!r}; "
                    "use the host's ids, e.g. Identity('acme', 'order_desk', call_sid)"
                )

    @property
    def scope(self) -> str:
        """``tenant/agent/session`` with each part percent-encoded (unambiguous, key-safe)."""
        return "/".join(quote(p, safe="") for p in (self.tenant_id, self.agent_id, self.session_id))

    def belongs_to(self, tenant_id: str | None, agent_id: str | None) -> bool:
        """True when this is of ``tenant_id`` and of ``agent_id`` (``None`` matches any)."""
        return (tenant_id is None or self.tenant_id == tenant_id) and (
            agent_id is None or self.agent_id == agent_id
        )

    def __str__(self) -> str:
        return self.scope


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One stored checkpoint.

    Attributes:
        identity: Whose checkpoint it is.
        version: Its version (1 for the first save); pass it as ``expected_version`` next.
        payload: What was saved, as it was saved (``str``, ``bytes`` or a JSON ``dict``).
        saved_at: The store clock's time at the save.
        expires_at: When it stops existing (``None``: never).
    """

    identity: Identity
    version: int
    payload: Payload
    saved_at: float
    expires_at: float | None = None


class VersionConflict(ConflictError):
    """A stale writer: the stored version is not the one the writer read.

    Attributes:
        identity: The conversation.
        expected: The version the writer read.
        current: The version stored now (0 when there is none).
    """

    def __init__(self, identity: Identity, expected: int, current: int) -> None:
        self.identity = identity
        self.expected = expected
        self.current = current
        super().__init__(
            f"checkpoint {identity} is at version {current} but this writer expected version "
            f"{expected}: another worker saved it in between. Load it again, reapply the turn "
            f"to the loaded state and save with expected_version={current}."
        )


class InvalidCheckpoint(StoreError):
    """A stored checkpoint that cannot be restored (corrupted, foreign or from another format).

    Attributes:
        identity: The conversation.
        store: The store it was read from, described (``SQLiteCheckpointStore(calls.db)``).
        problem: What is wrong, in plain words.
    """

    def __init__(self, identity: Identity, store: str, problem: str) -> None:
        self.identity = identity
        self.store = store
        self.problem = problem
        super().__init__(
            f"cannot restore checkpoint {identity} from {store}: {problem}. The call was not "
            "started afresh; repair or delete the checkpoint, or restore with "
            "on_invalid='fresh' to start a new call in its place."
        )


class UnreadableCheckpoint(StoreError):
    """A store found a checkpoint but cannot read it back (bad bytes, fields or kind)."""


class CheckpointStore(Protocol):
    """What every checkpoint backend provides (memory, SQLite, Redis)."""

    async def load(self, identity: Identity) -> Checkpoint | None:
        """Return the live checkpoint of ``identity``, or ``None``."""
        ...

    async def save(
        self,
        identity: Identity,
        payload: Payload,
        expected_version: int,
        *,
        ttl: float | None = None,
    ) -> int:
        """Store ``payload`` if the stored version is ``expected_version``; return the new one.

        ``ttl`` (seconds) overrides the store's default for this checkpoint.

        Raises:
            VersionConflict: When another writer saved first (a ``ConflictError``).
            StoreError: When the backend fails.
        """
        ...

    async def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        """Identities with a live checkpoint, sorted, optionally of one tenant and/or agent."""
        ...

    async def delete(self, identity: Identity) -> bool:
        """Remove the checkpoint; True when a live one was removed."""
        ...

    async def close(self) -> None:
        """Release connections (the store is unusable afterwards)."""
        ...


def encode_payload(payload: Payload) -> tuple[PayloadKind, bytes]:
    """Return the payload's kind and bytes (JSON dicts compact, keys sorted).

    Raises:
        StoreError: When the payload is not ``str``, ``bytes`` or a JSON-serialisable ``dict``.
    """
    if isinstance(payload, bytes):
        return "bytes", payload
    if isinstance(payload, str):
        return "text", payload.encode()
    if isinstance(payload, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
        try:
            text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"checkpoint payload is not JSON-serialisable: {exc}") from exc
        return "json", text.encode()
    raise StoreError(
        f"checkpoint payload must be str, bytes or a JSON dict, not {type(payload).__name__}"
    )


def decode_payload(kind: str, data: bytes) -> Payload:
    """Rebuild the payload ``encode_payload`` encoded.

    Raises:
        UnreadableCheckpoint: When ``kind`` is unknown or the bytes do not decode as it says.
    """
    try:
        if kind == "bytes":
            return data
        if kind == "text":
            return data.decode()
        if kind == "json":
            found = json.loads(data)
            if not isinstance(found, dict):
                raise ValueError(f"a JSON {type(found).__name__}, not an object")
            return cast(dict[str, Any], found)
    except (ValueError, AttributeError, TypeError) as exc:  # bad UTF-8 or JSON, not bytes
        raise UnreadableCheckpoint(f"its {kind} payload is unreadable: {exc}") from exc
    raise UnreadableCheckpoint(f"it has an unknown payload kind {kind!r}")


def expiry(now: float, ttl: float | None, default: float | None) -> float | None:
    """When a checkpoint saved at ``now`` expires (per-save ``ttl`` wins over the default).

    Raises:
        StoreError: When the TTL is not positive.
    """
    chosen = ttl if ttl is not None else default
    if chosen is None:
        return None
    if chosen <= 0:
        raise StoreError(f"checkpoint ttl must be positive seconds, got {chosen!r}")
    return now + chosen


def check_version(expected_version: int) -> None:
    """Reject a negative or non-integer ``expected_version`` with a fix."""
    if (
        isinstance(expected_version, bool)
        or not isinstance(expected_version, int)
        or expected_version < 0
    ):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise StoreError(
            f"expected_version must be an int >= 0 (0 = no checkpoint yet), got {expected_version!r}"
        )


def live(expires_at: float | None, now: float) -> bool:
    """True when a checkpoint with ``expires_at`` still exists at ``now``."""
    return expires_at is None or expires_at > now
