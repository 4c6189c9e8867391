"""The verdict cache and the debounce rule (the NeMo IORails and SuggestionLLM patterns).

Verdicts are cached on ``(procedure state hash, transcript tail, evidence revision)``: the
same question over the same state and evidence is never asked twice, and a cached verdict can
never restore an obsolete step because the state hash is part of its key.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from pipecat_steward.core.monitor.request import CacheKey
from pipecat_steward.core.monitor.verdict import CheckResult

__all__ = ["VerdictCache"]


@dataclass
class VerdictCache:
    """A bounded LRU of checked verdicts with hit/miss counters."""

    size: int = 64
    hits: int = 0
    misses: int = 0

    def __post_init__(self) -> None:
        self._items: OrderedDict[CacheKey, CheckResult] = OrderedDict()

    def get(self, key: CacheKey) -> CheckResult | None:
        """The cached result for ``key`` (counted as a hit or a miss)."""
        found = self._items.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return found

    def put(self, key: CacheKey, result: CheckResult) -> None:
        """Remember ``result`` (the oldest entry goes when full)."""
        self._items[key] = result
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    @property
    def hit_rate(self) -> float:
        """Hits over lookups (0 before any lookup)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
