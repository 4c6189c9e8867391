"""The async Redis client the Redis stores share, imported once with the install hint."""

from __future__ import annotations

from urllib.parse import urlsplit

from pipecat_steward.exceptions import StoreError

try:
    import redis.asyncio as aredis
    from redis.connection import parse_url
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(
        "the Redis stores need the redis client: pip install 'pipecat-steward[redis]'"
    ) from exc

__all__ = ["Redis", "RedisError", "connect"]

Redis = aredis.Redis


def connect(url: str | Redis) -> Redis:
    """A client for a ``redis://`` URL, or ``url`` itself when it already is a client.

    Raises:
        StoreError: The URL does not parse, e.g. a port that is no number.
    """
    if not isinstance(url, str):
        return url
    problem = url_problem(url)
    if problem is not None:
        raise StoreError(f"redis URL {url!r}: {problem}")
    return Redis.from_url(url)


def url_problem(url: str) -> str | None:
    """What is wrong with a Redis URL, or None.

    The client reads ``/x`` as database 0 without a word; here a database must be a number.
    """
    database = urlsplit(url).path.strip("/") if url.startswith(("redis:", "rediss:")) else ""
    if database and not database.isdigit():
        return f"the database {database!r} is no whole number"
    try:
        parse_url(url)
    except ValueError as exc:
        return str(exc)
    return None
