"""Parser of the condition grammar (precedence climbing over the token list).

Precedence, lowest first (as in Python)::

    or  <  and  <  not  <  == != < <= > >= in, not in  <  + -  <  * /  <  unary -  <  primary

A primary is a literal, a list ``[a, b]``, a parenthesised expression, a dotted name
``a.b.c`` or a call of an allow-listed function. A seed-style ``lambda p: <expr>``
condition is read by the :mod:`lambdas` layer this parser builds on. Nothing is ever handed
to Python's ``eval``.
"""

from __future__ import annotations

from pipecat_steward.core.expressions import nodes
from pipecat_steward.core.expressions.cursor import MAX_NESTING, describe
from pipecat_steward.core.expressions.functions import ARITY, FUNCTIONS
from pipecat_steward.core.expressions.lambdas import LambdaAccessors
from pipecat_steward.core.expressions.lexer import CONSTANTS, KEYWORDS, Token, tokenize
from pipecat_steward.core.expressions.nodes import Node, tree_depth
from pipecat_steward.exceptions import ExpressionError

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "MAX_NESTING", "parse_tree"]

MAX_LENGTH = 2000
"""Longest accepted expression, in characters."""

MAX_DEPTH = 2 * MAX_NESTING
"""Deepest accepted syntax tree (a parenthesis adds nesting but no tree level)."""

# Binding levels of the binary operators; 'not' (a prefix) sits between 'and' and comparisons.
_OR, _AND, _NOT, _CMP, _SUM, _PRODUCT = 1, 2, 3, 4, 5, 6
_LEVELS = {
    "or": _OR,
    "and": _AND,
    **dict.fromkeys(("==", "!=", "<", "<=", ">", ">=", "in", "not in"), _CMP),
    "+": _SUM,
    "-": _SUM,
    "*": _PRODUCT,
    "/": _PRODUCT,
}


def parse_tree(text: str, *, allow_lambda: bool) -> tuple[Node, str | None]:
    """Parse an expression into a syntax tree.

    Args:
        text: The expression source.
        allow_lambda: Accept a seed-style ``lambda p: <expr>`` condition.

    Returns:
        The tree and the lambda parameter name (None for a plain expression).

    Raises:
        ExpressionError: When the text is not a valid expression.

    """
    if not text.strip():
        raise ExpressionError("empty expression", text, 1)
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"expression longer than {MAX_LENGTH} characters", text, MAX_LENGTH + 1
        )
    tree, param = _Parser(text, tokenize(text)).parse(allow_lambda=allow_lambda)
    # Left-nested groups like ((a * b + c) * b + c) stack tree levels the nesting count does
    # not see; this bound keeps compiling, rendering and evaluating well inside the stack.
    if tree_depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"expression tree is deeper than {MAX_DEPTH} levels", text, 1)
    return tree, param


class _Parser(LambdaAccessors):
    """The grammar proper, on top of the token cursor and the lambda accessors."""

    def parse(self, *, allow_lambda: bool) -> tuple[Node, str | None]:
        """Parse the whole token list (after an optional lambda header)."""
        if self._at("lambda"):
            if not allow_lambda:
                raise self._error("a 'lambda' condition is accepted only by parse_condition")
            self._param = self._lambda_header()
        tree = self._expr(0)
        if self._peek().kind != "end":
            raise self._error(f"unexpected {describe(self._peek())}{_hint(self._peek())}")
        return tree, self._param

    # -- operators: precedence climbing keeps the parser's stack shallow ------------------

    def _expr(self, min_level: int) -> Node:
        """Parse an expression whose binary operators all bind at least at ``min_level``."""
        left = self._prefix(min_level)
        while (op := self._next_op(min_level)) is not None:
            left = self._chain(left, op)
        return left

    def _peek_op(self) -> tuple[str, int] | None:
        """Return the binary operator at the cursor and its token count, without consuming."""
        token = self._peek()
        if self._at("not") and self._at("in", 1):
            return "not in", 2
        if token.kind in ("op", "name") and token.text in _LEVELS:
            return token.text, 1
        return None

    def _next_op(self, min_level: int) -> str | None:
        """Consume and return the next binary operator if it binds at least at ``min_level``."""
        found = self._peek_op()
        if found is None or _LEVELS[found[0]] < min_level:
            return None
        self._pos += found[1]
        return found[0]

    def _chain(self, first: Node, op: str) -> Node:
        """Parse a run of same-level operators after ``first`` into one flat node."""
        level = _LEVELS[op]
        # A chain's operands sit one level down; counting it bounds the parser's stack.
        self._enter(self._tokens[self._pos - 1])
        if level == _CMP:
            node = self._comparison(first, op)
        elif level in (_OR, _AND):
            node = nodes.BoolOp(op, (first, *(operand for _, operand in self._operands(op, level))))
        else:
            node = nodes.Arith(first, self._operands(op, level))
        self._depth -= 1
        return node

    def _operands(self, op: str, level: int) -> tuple[tuple[str, Node], ...]:
        """Parse the right operands of a same-level run whose first operator is consumed."""
        pairs = [(op, self._expr(level + 1))]
        # The right operands took every tighter operator, so any operator left is this level's.
        while (more := self._next_op(level)) is not None:
            pairs.append((more, self._expr(level + 1)))
        return tuple(pairs)

    def _comparison(self, left: Node, op: str) -> Node:
        right = self._expr(_CMP + 1)
        found = self._peek_op()
        if found is not None and _LEVELS[found[0]] == _CMP:
            raise self._error("chained comparisons are not supported; join them with 'and'")
        return nodes.Compare(op, left, right)

    def _prefix(self, min_level: int) -> Node:
        """Parse ``not x`` (where a 'not' may stand) or a signed primary."""
        if not self._at("not"):
            return self._signed()
        token = self._advance()
        if min_level > _NOT:
            raise self._error("'not' must be parenthesised here", token)
        self._enter(token)
        operand = self._expr(_NOT)
        self._depth -= 1
        return nodes.Unary("not", operand)

    def _signed(self) -> Node:
        """Parse a primary after any unary minus signs (read in a loop, not by recursion)."""
        signs: list[Token] = []
        while self._at("-"):
            signs.append(self._advance())
            self._enter(signs[-1])
        node = self._primary()
        self._depth -= len(signs)
        for _ in signs:
            node = nodes.Unary("-", node)
        return node

    # -- primaries -------------------------------------------------------------------------

    def _primary(self) -> Node:
        token = self._peek()
        if token.kind in ("num", "str"):
            self._advance()
            return nodes.Literal(token.value)
        if token.kind == "name" and token.text in CONSTANTS:
            self._advance()
            return nodes.Literal(CONSTANTS[token.text])
        if token.kind == "name" and token.text not in KEYWORDS:
            return self._name()
        if self._at("(") or self._at("["):
            return self._bracketed(self._advance())
        raise self._error(f"expected an operand, found {describe(token)}")

    def _bracketed(self, opener: Token) -> Node:
        """Parse after ``(`` or ``[``: a group, a list, or a tuple (read as a list)."""
        self._enter(opener)
        if opener.text == "[":
            node: Node = nodes.ListNode(self._items("]", opener))
        else:
            node = self._group(opener)
        self._depth -= 1
        return node

    def _group(self, opener: Token) -> Node:
        """Parse after ``(``: a parenthesised expression, or a tuple read as a list."""
        if self._at(")"):
            raise self._error("empty parentheses")
        first = self._expr(0)
        if not self._at(","):
            self._expect(")", f"expected ')' to close '(' at column {opener.column}")
            return first
        self._advance()
        return nodes.ListNode((first, *self._items(")", opener)))

    def _items(self, close: str, opener: Token) -> tuple[Node, ...]:
        """Parse comma-separated expressions up to ``close`` (a trailing comma is allowed)."""
        items: list[Node] = []
        while not self._at(close):
            items.append(self._expr(0))
            if not self._at(","):
                break
            self._advance()
        problem = f"expected ',' or '{close}' to close '{opener.text}' at column {opener.column}"
        self._expect(close, problem)
        return tuple(items)

    def _name(self) -> Node:
        """Parse a dotted name, a function call, or (in a lambda) a parameter accessor."""
        start = self._advance()
        if start.text == self._param:
            return self._accessor(start)
        path = [start.text, *self._suffix(plain=True)]
        if self._at("("):
            return self._call(start, ".".join(path))
        return nodes.Var(tuple(path))

    def _call(self, start: Token, name: str) -> Node:
        if name not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise self._error(f"unknown function {name!r}; allowed: {allowed}", start)
        opener = self._advance()
        self._enter(opener)
        args = self._items(")", opener)
        self._depth -= 1
        if len(args) != ARITY:
            problem = f"{name}() takes exactly {ARITY} argument, got {len(args)}"
            raise self._error(problem, start)
        return nodes.FunctionCall(name, args)


def _hint(token: Token) -> str:
    """Suggest the grammar's spelling of a Python construct it does not support."""
    hints = {"is": "; use '==' or '!=' (e.g. 'x == null')", ":": "; only 'lambda p:' uses ':'"}
    return hints.get(token.text, "") if token.kind in ("name", "op") else ""
