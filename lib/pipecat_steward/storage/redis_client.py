"""The async Redis client the Redis stores share, imported once with the install hint."""

from __future__ import annotations

try:
    import redis.asyncio as aredis
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(
        "the Redis stores need the redis client: pip install 'pipecat-steward[redis]'"
    ) from exc

__all__ = ["Redis", "RedisError", "connect"]

Redis = aredis.Redis


def connect(url: str | Redis) -> Redis:
    """A client for a ``redis://`` URL, or ``url`` itself when it already is a client."""
    return Redis.from_url(url) if isinstance(url, str) else url
