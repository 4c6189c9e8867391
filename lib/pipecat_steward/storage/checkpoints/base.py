"""What the encoding checkpoint stores share: check the version, encode, then write.

Every backend validates ``expected_version`` and encodes the payload the same way before its
own atomic check-and-set; this base does both once so a backend writes only its storage step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from pipecat_steward.storage.checkpoints.contract import (
    Clock,
    Identity,
    Payload,
    PayloadKind,
    check_version,
    encode_payload,
    expiry,
    live,
)

__all__ = ["EncodingStore"]


class EncodingStore(ABC):
    """A checkpoint store that keeps payloads encoded (``kind`` and bytes).

    Attributes:
        ttl: Default lifetime of a checkpoint in seconds (``None``: forever).
        clock: Seconds since the epoch; injected by tests.
    """

    ttl: float | None
    clock: Clock

    async def save(
        self,
        identity: Identity,
        payload: Payload,
        expected_version: int,
        *,
        ttl: float | None = None,
    ) -> int:
        """Store ``payload`` if the stored version is ``expected_version``; return the new one.

        Raises:
            VersionConflict: When another writer saved first.
            StoreError: When the version or payload is invalid, or the backend fails.
        """
        check_version(expected_version)
        kind, data = encode_payload(payload)
        return await self._write(identity, kind, data, expected_version, ttl)

    @abstractmethod
    async def _write(
        self, identity: Identity, kind: PayloadKind, data: bytes, expected: int, ttl: float | None
    ) -> int:
        """Write the encoded checkpoint atomically if the stored version is ``expected``."""

    def _expires(self, now: float, ttl: float | None) -> float | None:
        """When a checkpoint saved at ``now`` expires (a per-save ``ttl`` wins over ``self.ttl``)."""
        return expiry(now, ttl, self.ttl)

    def _alive(self, expires_at: float | None) -> bool:
        """True when a checkpoint expiring at ``expires_at`` exists on the store's clock now."""
        return live(expires_at, self.clock())
