"""The text values of a log line, masked while a call holds a secret.

A model's reply streams a few characters per frame, and a TTS service times each word. pipecat
logs each frame: at TRACE as it pushes it (``LLMTextFrame#12(pts: None, text: [411])``), and
in its debug and LLM log observers (``text: '411'``, ``LLM GENERATING: '411'``). A secret read
back then reaches the log a piece per line, each piece too short to be told from any other
text, and the pieces together the secret. So while a call holds a secret, a streamed piece's
text is masked whole, and any other text value of a log line (a frame's text field, a quoted
string) has its numbers masked, however few their digits: an interim transcript, logged as it
grows, holds a secret's first digits before the secret is whole. Numbers outside text values
(times, ids) stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pipecat_steward.core.heard_secrets import mask_numbers
from pipecat_steward.core.redaction import PLACEHOLDER

__all__ = ["mask_text_values"]

# A frame's text field (up to the bracket that closes the field or the frame), or a string's
# repr (pipecat's observers log each text with !r).
_TEXT_VALUE = re.compile(
    r"(?P<open>text: \[)(?P<text>.*?)(?P<close>\](?=\)|, \w+: ))"
    r"|(?P<q>['\"])(?P<quoted>(?:\\.|(?!(?P=q)).)*)(?P=q)"
)
_HOLDS_TEXT_VALUE = re.compile(r"text: \[|['\"]")  # most lines hold none: one quick look
_STREAMED_PIECE = re.compile(r"\b(?:LLM|TTS)TextFrame\b|\bLLM GENERATING: ")


def mask_text_values(line: str) -> str:
    """``line`` with each text value masked: a streamed piece's whole, another's numbers."""
    if not _HOLDS_TEXT_VALUE.search(line):
        return line
    mask = _whole if _STREAMED_PIECE.search(line) else mask_numbers
    return _TEXT_VALUE.sub(lambda match: _masked_value(match, mask), line)


def _whole(_: str) -> str:
    return PLACEHOLDER


def _masked_value(match: re.Match[str], mask: Callable[[str], str]) -> str:
    """The text value ``match`` found, masked by ``mask``."""
    if match["q"]:
        return f"{match['q']}{mask(match['quoted'])}{match['q']}"
    return f"{match['open']}{mask(match['text'])}{match['close']}"
