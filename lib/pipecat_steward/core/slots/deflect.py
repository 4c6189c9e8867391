"""Deflections: a caller who evades the question twice has declined it.

``is_deflection`` recognises a reply that refuses or dodges the question just asked ("I'd rather
not say", "why do you need that?", "skip it", "no idea") and carries nothing of its own: a reply
with a digit or a number word is an answer, however it is phrased. It is a closed vocabulary,
deliberately narrow: a missed deflection costs one more question, while a reply wrongly taken
for one would decline a slot the caller meant to answer.
"""

from __future__ import annotations

import re

__all__ = ["DEFLECTIONS_TO_DECLINE", "is_deflection"]

DEFLECTIONS_TO_DECLINE = 2
"""Deflections of the same question after which the slot is declined."""

_PHRASES = (
    r"(?:i'?d|i would|i'?ll|i will)? ?(?:rather|prefer to) not",
    r"prefer not",
    r"(?:do not|don'?t|did not|didn'?t) (?:want|wish|care|like) to (?:say|give|share|tell|answer|"
    r"disclose|get into|go into|talk about)",
    r"(?:won'?t|will not|can'?t|cannot|not going to|not gonna) (?:say|give|share|tell|answer|"
    r"disclose)",
    r"not (?:comfortable|telling|saying|sharing)",
    r"none of your business",
    r"(?:that'?s|it'?s) (?:private|personal|confidential)",
    r"no comment",
    r"skip (?:it|that|this|the question)",
    r"(?:let'?s|just) skip",
    r"pass on (?:it|that|this)",
    r"next question",
    r"(?:let'?s )?move on",
    r"why do you (?:need|want|ask)",
    r"does (?:it|that) (?:matter|really matter)",
    r"(?:i )?(?:don'?t|do not) know",
    r"dunno",
    r"no idea",
    r"(?:i'?m )?not sure",
    r"never ?mind",
)
_DEFLECTION = re.compile(r"\b(?:" + "|".join(_PHRASES) + r")\b")
_CONTENT = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|half|dozen|couple)\b"
)


def is_deflection(text: str) -> bool:
    """True when ``text`` evades the question and carries no answer (no digit or number word)."""
    words = " ".join(text.lower().replace("’", "'").split())
    return bool(_DEFLECTION.search(words)) and not _CONTENT.search(words)
