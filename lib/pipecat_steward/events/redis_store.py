"""Conversation events in Redis: one stream per session (several workers, one Redis).

A session's events are a stream at ``<prefix>:<session>`` (percent-encoded), each entry holding
``seq`` and the event's JSON. Sessions are listed from a sorted set scored by their start time,
with their agent in a hash, so the newest calls come first without scanning every stream.
A session's latest writer claim is a counter at ``<prefix>:@writer:<session>``. Every write is
one Lua script per session (compare the claim when there is one, then add the entries and list
the session), so no claim slips between the check and the write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import quote

from pipecat_steward.events.schema import CallStarted, Event
from pipecat_steward.events.store import (
    SessionSummary,
    WriterClaim,
    check_writer,
    decode,
    encode,
)
from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.redis_client import Redis, RedisError, connect

__all__ = ["RedisEventStore"]

_APPEND = """
local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= latest then return latest end
local session = ARGV[2]
for i = 3, #ARGV, 4 do
  redis.call('XADD', KEYS[1], '*', 'seq', ARGV[i], 'data', ARGV[i + 1])
  if ARGV[i + 2] == '' then
    redis.call('ZADD', KEYS[3], 'NX', 0, session)
  else
    redis.call('ZADD', KEYS[3], ARGV[i + 2], session)
    redis.call('HSET', KEYS[4], session, ARGV[i + 3])
  end
end
return -1
"""
"""When ARGV[1] is the session's latest claim (or empty: written without one), add each event
(seq, JSON, and for a ``call_started`` its start and agent) and list the session: -1; else the
latest claim."""


class RedisEventStore:
    """Events in Redis streams.

    Args:
        url: A ``redis://`` URL, or an existing ``redis.asyncio.Redis`` client (bytes replies).
        prefix: Key prefix; one Redis can hold several deployments under different prefixes.
    """

    def __init__(self, url: str | Redis, *, prefix: str = "steward:events") -> None:
        self.client = connect(url)
        self.prefix = prefix
        self._append_script = self.client.register_script(_APPEND)

    def _stream(self, session: str) -> str:
        return f"{self.prefix}:{quote(session, safe='')}"

    def _writer(self, session: str) -> str:
        return f"{self.prefix}:@writer:{quote(session, safe='')}"

    async def claim(self, session: str) -> WriterClaim:
        try:
            writer = int(await self.client.incr(self._writer(session)))
            # Read after the claim: every write of an earlier one that landed is in the stream.
            last = await self.client.xrevrange(self._stream(session), count=1)
        except RedisError as exc:
            raise StoreError(f"redis claim of session {session!r} failed: {exc}") from exc
        entries = cast(list[tuple[bytes, dict[bytes, bytes]]], last)
        return WriterClaim(writer, int(entries[0][1][b"seq"]) + 1 if entries else 1)

    async def append(self, events: Sequence[Event], writer: int | None = None) -> None:
        try:
            for session in dict.fromkeys(e.session for e in events):
                await self._add(session, writer, [e for e in events if e.session == session])
        except RedisError as exc:
            raise StoreError(f"redis append of {len(events)} event(s) failed: {exc}") from exc

    async def _add(self, session: str, writer: int | None, events: Sequence[Event]) -> None:
        """Add one session's ``events`` in one script (under ``writer``'s claim, if given)."""
        args: list[Any] = ["" if writer is None else writer, session]
        for event in events:
            start, agent = ("", "")
            if isinstance(event, CallStarted):
                start, agent = repr(event.started_at), event.agent
            args += [event.seq, encode(event), start, agent]
        keys = [
            self._stream(session),
            self._writer(session),
            f"{self.prefix}:@sessions",
            f"{self.prefix}:@agents",
        ]
        latest = int(cast(int, await self._append_script(keys=keys, args=args)))
        if latest >= 0:
            check_writer(session, writer, latest)

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
