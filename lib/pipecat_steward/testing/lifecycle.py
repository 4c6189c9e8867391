"""Something a test starts and stops: ``start``/``stop``, or ``async with`` around both."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Lifecycle:
    """``async with`` starts it and stops it again, however the block ends."""

    async def start(self) -> None:
        """Start; return once it is ready for use."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop and release what ``start`` took."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
