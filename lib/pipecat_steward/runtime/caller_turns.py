"""One identity for caller turns, shared by the relay, the session, the monitor and the extractor.

A caller turn is what the engine reads as one turn: the caller's words between two of its
inferences. The speech-to-text service may deliver them as several final transcripts, and the
user aggregator then merges those into one user message; counting transcripts would number
that turn twice while the engine sees it once. So the session owns one counter:

- the relay stamps each final transcript with ``heard()``: the first transcript after the
  engine took the previous turn opens the next turn; later ones join it;
- the session calls ``taken()`` when the engine starts a caller turn: it takes the open turn
  (or opens one itself when no transcript was stamped, as in a scripted or direct run).

The monitor and the extractor read the turn from the stamp on the transcript, never from a
count of their own, so all four agree on which turn a transcript, a verdict or an extraction
belongs to.
"""

from __future__ import annotations

__all__ = ["CallerTurns"]


class CallerTurns:
    """The caller-turn counter of one conversation.

    Attributes:
        current: The latest caller turn opened (0 before the caller said anything).
    """

    def __init__(self, current: int = 0) -> None:
        self.current = current
        self._open = False

    @property
    def open(self) -> bool:
        """Whether a transcript opened a turn the engine has not taken yet."""
        return self._open

    def heard(self) -> int:
        """A final transcript arrived: the turn it belongs to (opened when none is open)."""
        if not self._open:
            self.current += 1
            self._open = True
        return self.current

    def upcoming(self) -> int:
        """The turn a transcript arriving now would belong to, without opening it."""
        return self.current if self._open else self.current + 1

    def taken(self) -> int:
        """The engine started a caller turn: the turn it takes (the open one, else a new one)."""
        if not self._open:
            self.current += 1
        self._open = False
        return self.current
