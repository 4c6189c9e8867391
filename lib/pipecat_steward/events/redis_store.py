"""Conversation events in Redis: one stream per session (several workers, one Redis).

A session's events are a stream at ``<prefix>:<session>`` (percent-encoded), each entry holding
``seq`` and the event's JSON. Sessions are listed from a sorted set scored by their start time,
with their agent in a hash, so the newest calls come first without scanning every stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import quote

from pipecat_steward.events.schema import CallStarted, Event
from pipecat_steward.events.store import SessionSummary, decode, encode
from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.redis_client import Redis, RedisError, connect

__all__ = ["RedisEventStore"]


class RedisEventStore:
    """Events in Redis streams.

    Args:
        url: A ``redis://`` URL, or an existing ``redis.asyncio.Redis`` client (bytes replies).
        prefix: Key prefix; one Redis can hold several deployments under different prefixes.
    """

    def __init__(self, url: str | Redis, *, prefix: str = "steward:events") -> None:
        self.client = connect(url)
        self.prefix = prefix

    def _stream(self, session: str) -> str:
        return f"{self.prefix}:{quote(session, safe='')}"

    async def append(self, events: Sequence[Event]) -> None:
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                for event in events:
                    fields: dict[Any, Any] = {"seq": event.seq, "data": encode(event)}
                    pipe.xadd(self._stream(event.session), fields)
                    if isinstance(event, CallStarted):
                        pipe.zadd(f"{self.prefix}:@sessions", {event.session: event.started_at})
                        pipe.hset(f"{self.prefix}:@agents", event.session, event.agent)  # pyright: ignore[reportUnknownMemberType]
                    else:
                        pipe.zadd(f"{self.prefix}:@sessions", {event.session: 0}, nx=True)
                await pipe.execute()
        except RedisError as exc:
            raise StoreError(f"redis append of {len(events)} event(s) failed: {exc}") from exc

    async def read(self, session: str, after: int = 0) -> list[Event]:
        try:
            entries = await self.client.xrange(self._stream(session))
        except RedisError as exc:
            raise StoreError(f"redis read of session {session!r} failed: {exc}") from exc
        texts = [
            f[b"data"]
            for _, f in cast(list[tuple[bytes, dict[bytes, bytes]]], entries)
            if int(f[b"seq"]) > after
        ]
        return sorted(decode(texts), key=lambda e: e.seq)

    async def sessions(self, limit: int = 100) -> list[SessionSummary]:
        try:
            ranked = await self.client.zrevrange(
                f"{self.prefix}:@sessions", 0, limit - 1, withscores=True
            )
            found: list[SessionSummary] = []
            for raw, score in cast(list[tuple[bytes, float]], ranked):
                session = raw.decode()
                agent = await self.client.hget(f"{self.prefix}:@agents", session)  # pyright: ignore[reportUnknownMemberType]
                stream = self._stream(session)
                count = await self.client.xlen(stream)
                last = cast(
                    list[tuple[bytes, dict[bytes, bytes]]],
                    await self.client.xrevrange(stream, count=1),
                )
                last_t = decode([last[0][1][b"data"]])[0].t if last else 0.0
                name = cast(bytes, agent).decode() if agent else ""
                found.append(SessionSummary(session, name, float(score), int(count), last_t))
        except RedisError as exc:
            raise StoreError(f"redis list of event sessions failed: {exc}") from exc
        return found

    async def close(self) -> None:
        await self.client.aclose()
