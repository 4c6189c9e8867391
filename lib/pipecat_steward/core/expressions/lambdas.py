"""Translation of seed-style ``lambda p: <expr>`` conditions.

Seed configs write conditions as Python lambda strings. They are never handed to Python:
the body is parsed with the grammar, and the few ways a lambda reads its argument become
plain variables: ``p.get('x')``, ``p.get('x', default)``, ``p['x']`` and ``p.x`` read
``x`` (``.y`` or ``['y']`` after them read nested keys).
"""

from __future__ import annotations

from pipecat_steward.core.expressions.cursor import TokenCursor, describe
from pipecat_steward.core.expressions.lexer import IDENTIFIER, KEYWORDS, Token
from pipecat_steward.core.expressions.nodes import Literal, Node, Var

__all__ = ["LambdaAccessors"]


class LambdaAccessors(TokenCursor):
    """The parser layer that reads a lambda header and the parameter's accessors."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        super().__init__(text, tokens)
        self._param: str | None = None

    def _expr(self, min_level: int) -> Node:
        """Parse a full expression (the grammar layer provides it, for ``.get`` defaults)."""
        raise NotImplementedError

    def _lambda_header(self) -> str:
        """Read ``lambda <param>:`` and return the parameter name."""
        self._advance()
        param = self._peek()
        if param.kind != "name" or param.text in KEYWORDS:
            raise self._error("a condition lambda takes one parameter, e.g. 'lambda filled: ...'")
        self._advance()
        self._expect(":", "expected ':' after the lambda parameter")
        return param.text

    def _accessor(self, param: Token) -> Node:
        """Translate ``p.get('x'[, d])``, ``p['x']`` or ``p.x`` (with nested keys) to a Var."""
        key, default = self._accessor_root(param)
        path = [key] if default is not None else [key, *self._suffix(plain=False)]
        if self._at(".") or self._at("["):
            # Python would look inside the default too; refusing keeps one clear meaning.
            raise self._error("nothing may follow a .get() that has a default")
        if self._at("("):
            raise self._error(f"unknown function {'.'.join(path)!r}; calls are not methods")
        return Var(tuple(path), default)

    def _accessor_root(self, param: Token) -> tuple[str, Node | None]:
        """Read the first accessor after the parameter: its key and any ``.get`` default."""
        if self._at("["):
            return self._subscript(root=True), None
        if self._at(".") and self._at("get", 1) and self._at("(", 2):
            return self._get_call()
        if self._at("."):
            self._advance()
            return self._key(self._expect_name(), root=True), None
        usage = f"{param.text}.get('name'), {param.text}['name'] or {param.text}.name"
        raise self._error(f"use {usage} to read a variable", param)

    def _get_call(self) -> tuple[str, Node | None]:
        """Parse ``.get('key'[, default])`` and return the key and the default."""
        self._pos += 2  # '.' and 'get', already checked by the caller
        opener = self._advance()
        key = self._key(self._string_key(f"{self._param}.get()"), root=True)
        default: Node | None = None
        if self._at(",") and not self._at(")", 1):
            self._advance()
            self._enter(opener)
            default = self._expr(0)
            self._depth -= 1
        if self._at(","):
            self._advance()
        self._expect(")", f"expected ')' to close '(' at column {opener.column}")
        # get(key, None) means exactly get(key); normalising keeps one canonical form.
        return key, None if default == Literal(None) else default

    def _suffix(self, *, plain: bool) -> list[str]:
        """Read ``.key`` segments (and ``['key']`` ones in a lambda) after a name."""
        segments: list[str] = []
        while True:
            if self._at("."):
                self._advance()
                segments.append(self._expect_name().text)
            elif self._at("[") and not plain:
                segments.append(self._subscript(root=False))
            else:
                return segments

    def _expect_name(self) -> Token:
        if self._peek().kind != "name":
            raise self._error(f"expected a name after '.', found {describe(self._peek())}")
        return self._advance()

    def _subscript(self, *, root: bool) -> str:
        """Parse ``['key']`` and return the key."""
        opener = self._advance()
        key = self._key(self._string_key("[...]"), root=root)
        self._expect("]", f"expected ']' to close '[' at column {opener.column}")
        return key

    def _string_key(self, where: str) -> Token:
        if self._peek().kind != "str":
            raise self._error(f"expected a quoted variable name in {where}")
        return self._advance()

    def _key(self, token: Token, *, root: bool) -> str:
        """Check a key is a name the grammar can write; a root may not be a keyword."""
        key = token.text if token.kind == "name" else str(token.value)
        if not IDENTIFIER.fullmatch(key) or (root and key in KEYWORDS):
            raise self._error(f"{key!r} is not a valid variable name", token)
        return key
