"""Canonical text of a syntax tree.

The rendering re-parses to the same tree: parentheses appear exactly where precedence or
an explicit grouping in the source needs them, so ``str(parse(t))`` is a normal form of ``t``.
"""

from __future__ import annotations

from pipecat_steward.core.expressions import nodes
from pipecat_steward.core.expressions.nodes import Node

__all__ = ["render"]

# Binding strength of each node's outermost operator; mirrors the parser's levels.
_OR, _AND, _NOT, _CMP, _SUM, _PRODUCT, _UNARY, _ATOM = 1, 2, 3, 4, 5, 6, 7, 8
_UNARY_TEXT = {"-": "-", "not": "not "}
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def render(node: Node, param: str | None = None) -> str:
    """Render a tree as canonical source text.

    Args:
        node: The root of the tree.
        param: The lambda parameter when the tree came from a ``lambda p: ...`` condition;
            variables then render as ``p.x`` / ``p.get('x', default)``.

    Returns:
        Text that parses back to an equal tree.

    """
    return _Renderer(param).text(node)


def _level(node: Node) -> int:
    """Return how tightly a node's outermost operator binds."""
    match node:
        case nodes.BoolOp(op=op):
            return _OR if op == "or" else _AND
        case nodes.Unary(op=op):
            return _NOT if op == "not" else _UNARY
        case nodes.Compare():
            return _CMP
        case nodes.Arith(rest=rest):
            return _SUM if rest[0][0] in "+-" else _PRODUCT
        case _:
            return _ATOM


def render_literal(value: object) -> str:
    """Render a literal value (null, bool, number or string) in grammar syntax.

    Args:
        value: A literal's value.

    Returns:
        Its source text; strings use double quotes.

    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(_STRING_ESCAPES.get(char, char) for char in value) + '"'
    return repr(value)


class _Renderer:
    """Renders nodes; holds the lambda parameter so variables render in the same style."""

    def __init__(self, param: str | None) -> None:
        self._param = param

    def text(self, node: Node) -> str:
        match node:
            case nodes.Literal(value=value):
                return render_literal(value)
            case nodes.ListNode(items=items):
                return "[" + ", ".join(self.text(item) for item in items) + "]"
            case nodes.FunctionCall(name=name, args=args):
                return name + "(" + ", ".join(self.text(arg) for arg in args) + ")"
            case nodes.Var():
                return self._var(node)
            case nodes.Unary(op=op, operand=operand):
                return _UNARY_TEXT[op] + self._operand(operand, _level(node))
            case nodes.Compare(op=op, left=left, right=right):
                return f"{self._operand(left, _CMP + 1)} {op} {self._operand(right, _CMP + 1)}"
            case nodes.Arith():
                return self._arith(node)
            case nodes.BoolOp(op=op, operands=operands):
                level = _level(node) + 1
                return f" {op} ".join(self._operand(operand, level) for operand in operands)

    def _operand(self, node: Node, minimum: int) -> str:
        """Render a child, parenthesised when it binds looser than ``minimum``."""
        text = self.text(node)
        return text if _level(node) >= minimum else f"({text})"

    def _arith(self, node: nodes.Arith) -> str:
        # Operands of the same level are parenthesised: they came from explicit grouping,
        # since the parser folds an unparenthesised run into this one flat node.
        level = _level(node) + 1
        parts = [self._operand(node.first, level)]
        parts.extend(f"{op} {self._operand(operand, level)}" for op, operand in node.rest)
        return " ".join(parts)

    def _var(self, node: nodes.Var) -> str:
        path = ".".join(node.path)
        if self._param is None:
            # A plain expression cannot carry a default; parse never builds one there.
            return path
        if node.default is None:
            return f"{self._param}.{path}"
        key = render_literal(node.path[0])
        return f"{self._param}.get({key}, {self.text(node.default)})"
