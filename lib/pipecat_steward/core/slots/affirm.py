"""Pure-affirmative detection for auto-confirm and inline confirm (seed 000 §7.3, §7.3a)."""

from __future__ import annotations

__all__ = ["is_affirmative", "starts_affirmative"]

AFFIRMATIVES = frozenset(
    {
        "yes", "yeah", "yep", "yup", "yea", "ya", "correct", "right", "sure", "ok", "okay",
        "perfect", "great", "exactly", "confirmed", "confirm", "absolutely", "definitely",
        "affirmative", "indeed", "fine", "good", "sounds good", "that's right", "thats right",
        "that's correct", "thats correct", "looks right", "looks good", "all good", "yes please",
        "of course", "certainly",
    }
)  # fmt: skip
CORRECTION_SIGNALS = frozenset(
    {
        "but", "actually", "wait", "change", "not", "no", "wrong", "instead", "different",
        "except", "however", "although", "though", "hold", "update", "make", "nope",
    }
)  # fmt: skip
_STRIP_PUNCT = str.maketrans("", "", ".,;:!?\"'")
_MAX_WORDS = 5


def _words(text: str) -> list[str]:
    return [w.translate(_STRIP_PUNCT) for w in text.lower().split() if w.translate(_STRIP_PUNCT)]


def is_affirmative(text: str) -> bool:
    """True for a short, pure affirmative such as "Yes, that's correct".

    Only messages of at most five words whose first word is an affirmative and that carry no
    correction signal ("Yes, but make it 6") qualify; longer messages go to the LLM.
    """
    normalized = text.lower().strip().rstrip(".,!? ")
    if normalized in AFFIRMATIVES:
        return True
    words = _words(normalized)
    if not words or len(words) > _MAX_WORDS or words[0] not in AFFIRMATIVES:
        return False
    return not any(w in CORRECTION_SIGNALS for w in words[1:])


def starts_affirmative(text: str) -> bool:
    """True when the first word affirms and no correction signal follows in the next three."""
    words = _words(text)
    if not words or words[0] not in AFFIRMATIVES:
        return False
    return not any(w in CORRECTION_SIGNALS for w in words[1:4])
