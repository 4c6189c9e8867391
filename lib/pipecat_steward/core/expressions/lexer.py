"""Tokenizer of the condition grammar.

Every token carries its 1-based column so parse errors can point at the offending character.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal as TypingLiteral

from pipecat_steward.exceptions import ExpressionError

__all__ = ["CONSTANTS", "IDENTIFIER", "KEYWORDS", "Token", "TokenKind", "tokenize"]

TokenKind = TypingLiteral["num", "str", "name", "op", "end"]

CONSTANTS: dict[str, None | bool] = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "null": None,
    "None": None,
}
"""Literal words; both the JSON and the Python spelling are accepted."""

KEYWORDS = frozenset({"and", "or", "not", "in", "lambda", *CONSTANTS})
"""Words that cannot name a root variable."""

# Names are ASCII identifiers: config variable names are snake_case, and a narrow alphabet
# keeps look-alike Unicode characters from silently naming a different variable.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")

# Two-character operators first so ``<=`` is not read as ``<`` then ``=``.
_OPERATORS = ("==", "!=", "<=", ">=", *"<>+-*/()[],.:")
_HINTS = {
    "=": "; use '==' to compare",
    "!": "; use 'not'",
    "&": "; use 'and'",
    "|": "; use 'or'",
}
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "0": "\0",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "/": "/",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexical token.

    Attributes:
        kind: ``num``, ``str``, ``name`` (identifiers and keywords), ``op`` or ``end``.
        text: The exact source text of the token.
        value: The decoded value of a number or string literal, else None.
        column: 1-based column of the token's first character.

    """

    kind: TokenKind
    text: str
    value: int | float | str | None
    column: int


def tokenize(text: str) -> list[Token]:
    """Split an expression into tokens, ending with an ``end`` token.

    Args:
        text: The expression source.

    Returns:
        The tokens in order; the last one has kind ``end`` and the column after the text.

    Raises:
        ExpressionError: On a character or literal the grammar does not know.

    """
    tokens: list[Token] = []
    index = 0
    while index < len(text):
        if text[index].isspace():
            index += 1
            continue
        token = _read_token(text, index)
        tokens.append(token)
        index += len(token.text)
    tokens.append(Token("end", "", None, len(text) + 1))
    return tokens


def _read_token(text: str, index: int) -> Token:
    """Read the token starting at ``index`` (which is not whitespace)."""
    char = text[index]
    if char.isdigit() and (match := _NUMBER.match(text, index)):
        return _number_token(text, match.group(), index)
    if match := IDENTIFIER.match(text, index):
        return Token("name", match.group(), None, index + 1)
    if char in "'\"":
        return _read_string(text, index)
    for operator in _OPERATORS:
        if text.startswith(operator, index):
            return Token("op", operator, None, index + 1)
    hint = _HINTS.get(char, "")
    raise ExpressionError(f"unexpected character {char!r}{hint}", text, index + 1)


def _number_token(text: str, literal: str, index: int) -> Token:
    """Decode a numeric literal; floats that overflow to infinity are rejected."""
    if "." not in literal and "e" not in literal.lower():
        return Token("num", literal, int(literal), index + 1)
    value = float(literal)
    if math.isinf(value):
        # An infinite literal could not be rendered back as a number, so refuse it here.
        raise ExpressionError("number is too large", text, index + 1)
    return Token("num", literal, value, index + 1)


def _read_string(text: str, start: int) -> Token:
    """Read a quoted string literal with backslash escapes."""
    quote = text[start]
    parts: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == quote:
            return Token("str", text[start : index + 1], "".join(parts), start + 1)
        if char == "\\":
            decoded, index = _read_escape(text, index)
            parts.append(decoded)
            continue
        parts.append(char)
        index += 1
    raise ExpressionError("unterminated string", text, start + 1)


def _read_escape(text: str, index: int) -> tuple[str, int]:
    """Decode the escape sequence whose backslash is at ``index``; return it and the next index."""
    code = text[index + 1 : index + 2]
    if code in _ESCAPES:
        return _ESCAPES[code], index + 2
    if code == "u" and _HEX4.fullmatch(text, index + 2, index + 6):
        return chr(int(text[index + 2 : index + 6], 16)), index + 6
    if not code:
        raise ExpressionError("unterminated string", text, index + 1)
    raise ExpressionError(f"unknown escape '\\{code}'", text, index + 1)
