"""The extractor's context window and the turns it skips.

Context is the latest caller utterance plus at most six previous caller utterances, each cut
at 500 characters: enough for a short answer ("1990") to complete an earlier one ("born
December 10th"). Assistant statements and application messages are never included, so they
can never become facts. Empty, non-lexical ("um…", "[noise]") and synthetic turns (notes the
platform injected) are skipped, and so is every turn during an active secure capture.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pipecat_steward.core.words import word_set

__all__ = [
    "MAX_CHARS",
    "MAX_PREVIOUS",
    "SYNTHETIC_PREFIXES",
    "ExtractionContext",
    "SkipReason",
    "build_context",
    "skip_reason",
]

MAX_PREVIOUS = 6
MAX_CHARS = 500
SYNTHETIC_PREFIXES = ("[procedure check]", "[steward note]", "<system", "[platform")
_FILLERS = word_set("um umm uh uhh hmm hm mm mhm mmm er erm ah eh uh-huh mm-hmm")
_MARKUP = re.compile(r"\[[^\]]*\]|\([^)]*\)|<[^>]*>")
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)


SkipReason = Literal["empty", "non_lexical", "synthetic", "secure_capture", "nothing_eligible"]
"""Why a caller turn is not sent to the extractor."""


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """The latest caller utterance and up to six earlier ones (oldest first)."""

    latest: str
    previous: tuple[str, ...] = ()

    @property
    def lines(self) -> tuple[str, ...]:
        """Every utterance, oldest first, the latest last."""
        return (*self.previous, self.latest)


def build_context(caller_utterances: Sequence[str]) -> ExtractionContext:
    """The window over the caller's utterances (the last one is the latest)."""
    clipped = [u.strip()[:MAX_CHARS] for u in caller_utterances if u.strip()]
    if not clipped:
        return ExtractionContext("")
    return ExtractionContext(clipped[-1], tuple(clipped[:-1][-MAX_PREVIOUS:]))


def skip_reason(
    text: str, *, synthetic: bool = False, secure_capture: bool = False
) -> SkipReason | None:
    """Why ``text`` is not extracted from, or None when it should be."""
    if secure_capture:
        return "secure_capture"
    stripped = text.strip()
    if not stripped:
        return "empty"
    if synthetic or stripped.lower().startswith(SYNTHETIC_PREFIXES):
        return "synthetic"
    words = [w for w in _WORD.findall(_MARKUP.sub(" ", stripped.lower())) if w not in _FILLERS]
    return None if words else "non_lexical"
