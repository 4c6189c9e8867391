"""A cursor over the token list with the helpers every parsing layer shares."""

from __future__ import annotations

from pipecat_steward.core.expressions.lexer import Token
from pipecat_steward.exceptions import ExpressionError

__all__ = ["MAX_NESTING", "TokenCursor", "describe"]

MAX_NESTING = 64
"""Deepest accepted nesting of parentheses, brackets, calls, ``not``, unary minus and
operator operands, counted as the parser reads them."""


def describe(token: Token) -> str:
    """Name a token in an error message.

    Args:
        token: The token to name.

    Returns:
        ``end of expression`` for the end token, else the quoted token text.

    """
    return "end of expression" if token.kind == "end" else repr(token.text)


class TokenCursor:
    """Parser state: the source text, its tokens, a position and the nesting depth."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self._text = text
        self._tokens = tokens
        self._pos: int = 0
        self._depth: int = 0

    def _peek(self) -> Token:
        return self._tokens[self._pos]

    def _advance(self) -> Token:
        token = self._tokens[self._pos]
        if token.kind != "end":
            self._pos += 1
        return token

    def _at(self, text: str, offset: int = 0) -> bool:
        """Whether the token at ``offset`` is the operator or word ``text`` (not a literal)."""
        index = min(self._pos + offset, len(self._tokens) - 1)
        token = self._tokens[index]
        return token.kind in ("op", "name") and token.text == text

    def _expect(self, text: str, problem: str) -> Token:
        if not self._at(text):
            raise self._error(f"{problem}, found {describe(self._peek())}")
        return self._advance()

    def _error(self, problem: str, token: Token | None = None) -> ExpressionError:
        """Build an error located at ``token`` (default: the current token)."""
        column = (token or self._peek()).column
        return ExpressionError(problem, self._text, column)

    def _enter(self, opener: Token) -> None:
        """Go one nesting level deeper (callers step back out), refusing past MAX_NESTING."""
        if self._depth >= MAX_NESTING:
            raise self._error(f"expression nests deeper than {MAX_NESTING} levels", opener)
        self._depth += 1
