"""The Redis checkpoint store: one Redis shared by several bot workers.

Uses the async client (``redis.asyncio``). A checkpoint is a hash at
``<prefix>:<tenant>:<agent>:<session>`` (parts percent-encoded, so ids may hold ``:`` or glob
characters). ``save`` is one Lua script — read version, compare, write, set expiry — so the
check-and-set is atomic on the server whatever the number of workers. Expiry is decided on the
store's injected clock (``expires_at`` in the hash) and also set natively (``PEXPIRE``) so
Redis reclaims the memory of abandoned sessions.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import quote, unquote

from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.checkpoints import contract
from pipecat_steward.storage.checkpoints.base import EncodingStore
from pipecat_steward.storage.checkpoints.contract import Checkpoint, Identity, PayloadKind
from pipecat_steward.storage.redis_client import Redis, RedisError, connect

__all__ = ["RedisCheckpointStore"]

# KEYS[1] key; ARGV: now, expected, kind, payload, saved_at, expires_at ('' = never), ttl_ms
_SAVE = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'expires_at')
local version = tonumber(cur[1]) or 0
local exp = tonumber(cur[2])
if exp and exp <= tonumber(ARGV[1]) then version = 0 end
if version ~= tonumber(ARGV[2]) then return {0, version} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'version', version + 1, 'kind', ARGV[3], 'payload', ARGV[4],
           'saved_at', ARGV[5], 'expires_at', ARGV[6])
if ARGV[7] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
return {1, version + 1}
"""
_FIELDS = ("version", "kind", "payload", "saved_at", "expires_at")


class RedisCheckpointStore(EncodingStore):
    """Checkpoints in Redis, shared by any number of workers.

    Args:
        url: A ``redis://`` URL, or an existing ``redis.asyncio.Redis`` client (bytes replies).
        ttl: Default lifetime of a checkpoint in seconds (``None``: forever).
        clock: Seconds since the epoch; injected by tests.
        prefix: Key prefix; one Redis can hold several deployments under different prefixes.
    """

    def __init__(
        self,
        url: str | Redis,
        *,
        ttl: float | None = None,
        clock: contract.Clock = contract.system_clock,
        prefix: str = "steward:checkpoint",
    ) -> None:
        self.client = connect(url)
        self.ttl = ttl
        self.clock = clock
        self.prefix = prefix
        self._save_script = self.client.register_script(_SAVE)

    def _key(self, identity: Identity) -> str:
        parts = (identity.tenant_id, identity.agent_id, identity.session_id)
        return ":".join([self.prefix, *(quote(p, safe="") for p in parts)])

    def _identity(self, key: bytes | str) -> Identity | None:
        text = key.decode() if isinstance(key, bytes) else key
        parts = text[len(self.prefix) + 1 :].split(":")
        return Identity(*(unquote(p) for p in parts)) if len(parts) == 3 else None

    async def load(self, identity: Identity) -> Checkpoint | None:
        try:
            raw = await self.client.hmget(self._key(identity), list(_FIELDS))  # pyright: ignore[reportUnknownMemberType]
        except RedisError as exc:
            raise StoreError(f"redis load of checkpoint {identity} failed: {exc}") from exc
        version, kind, data, saved_at, expires_at = cast(list[bytes | None], raw)
        try:
            expires = float(expires_at) if expires_at else None
            if version is None or kind is None or data is None or not self._alive(expires):
                return None
            number, at = int(version), float(saved_at or 0)
            payload = contract.decode_payload(kind.decode(), data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise contract.UnreadableCheckpoint(f"its fields do not parse: {exc}") from exc
        return Checkpoint(identity, number, payload, at, expires)

    async def _write(
        self, identity: Identity, kind: PayloadKind, data: bytes, expected: int, ttl: float | None
    ) -> int:
        now = self.clock()
        expires = self._expires(now, ttl)
        ttl_ms = "" if expires is None else str(max(1, round((expires - now) * 1000)))
        args: list[Any] = [
            repr(now),
            expected,
            kind,
            data,
            repr(now),
            "" if expires is None else repr(expires),
            ttl_ms,
        ]
        try:
            # redis-py's annotations make the awaited reply an Awaitable in some releases; the
            # save script always replies with [ok, version].
            reply = await self._save_script(keys=[self._key(identity)], args=args)
            ok, version = cast(list[Any], reply)
        except RedisError as exc:
            raise StoreError(f"redis save of checkpoint {identity} failed: {exc}") from exc
        if not ok:
            raise contract.VersionConflict(identity, expected, int(version))
        return int(version)

    async def list(
        self, tenant_id: str | None = None, agent_id: str | None = None
    ) -> tuple[Identity, ...]:
        tenant = quote(tenant_id, safe="") if tenant_id is not None else "*"
        agent = quote(agent_id, safe="") if agent_id is not None else "*"
        try:
            keys = [
                k async for k in self.client.scan_iter(match=f"{self.prefix}:{tenant}:{agent}:*")
            ]
            expiries = [await self.client.hget(k, "expires_at") for k in keys]  # pyright: ignore[reportUnknownMemberType]
        except RedisError as exc:
            raise StoreError(f"redis list of checkpoints failed: {exc}") from exc
        now = self.clock()
        found = [
            self._identity(k)
            for k, e in zip(keys, cast(list[bytes | None], expiries), strict=True)
            if contract.live(float(e) if e else None, now)
        ]
        return tuple(
            sorted(i for i in found if i is not None and i.belongs_to(tenant_id, agent_id))
        )

    async def delete(self, identity: Identity) -> bool:
        key = self._key(identity)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hmget(key, ["version", "expires_at"])  # pyright: ignore[reportUnknownMemberType]
                pipe.delete(key)
                (version, expires_at), _ = await pipe.execute()
        except RedisError as exc:
            raise StoreError(f"redis delete of checkpoint {identity} failed: {exc}") from exc
        try:
            expires = float(expires_at) if expires_at else None
        except ValueError:  # a damaged checkpoint is removed too
            return version is not None
        return version is not None and self._alive(expires)

    async def close(self) -> None:
        await self.client.aclose()
