"""The syntax tree of the condition grammar.

Nodes are frozen, slotted dataclasses so a parsed tree can be shared, hashed and compared
structurally. Left-associative chains of the same precedence (``a + b - c``, ``a or b or c``)
are kept flat, so a long chain never produces a deep tree: evaluation and rendering recurse
only as deep as the expression really nests.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Arith",
    "BoolOp",
    "FunctionCall",
    "Compare",
    "ListNode",
    "Literal",
    "LiteralValue",
    "Node",
    "Unary",
    "Var",
    "children",
    "free_names",
    "tests_null",
    "tree_depth",
]

LiteralValue = None | bool | int | float | str


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: string, int, float, bool or null."""

    value: LiteralValue


@dataclass(frozen=True, slots=True)
class ListNode:
    """A list literal ``[a, b]`` (a Python-style tuple ``(a, b)`` parses to this too)."""

    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Var:
    """A variable reference ``a.b.c``.

    Attributes:
        path: The root name followed by nested mapping keys.
        default: Used when the looked-up value is null (from ``p.get('x', default)``).

    """

    path: tuple[str, ...]
    default: Node | None = None


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A call of an allow-listed function."""

    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Unary:
    """A prefix operation: ``-`` (unary minus) or ``not`` (boolean negation)."""

    op: str
    operand: Node


@dataclass(frozen=True, slots=True)
class Arith:
    """A flat left-associative chain of ``+ -`` or of ``* /`` operations.

    Attributes:
        first: The leftmost operand.
        rest: ``(operator, operand)`` pairs applied left to right.

    """

    first: Node
    rest: tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class Compare:
    """A single comparison: ``== != < <= > >= in``, or ``not in``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class BoolOp:
    """A flat chain of ``and`` or of ``or`` with Python's short-circuit semantics."""

    op: str
    operands: tuple[Node, ...]


Node = Literal | ListNode | Var | FunctionCall | Unary | Arith | Compare | BoolOp


def children(node: Node) -> tuple[Node, ...]:
    """Return the direct sub-expressions of a node.

    Args:
        node: Any syntax tree node.

    Returns:
        The child nodes, left to right.

    """
    match node:
        case Literal():
            return ()
        case ListNode(items=items) | FunctionCall(args=items):
            return items
        case Var(default=default):
            return () if default is None else (default,)
        case Unary(operand=operand):
            return (operand,)
        case Arith(first=first, rest=rest):
            return (first, *(operand for _, operand in rest))
        case Compare(left=left, right=right):
            return (left, right)
        case BoolOp(operands=operands):
            return operands


def free_names(node: Node) -> frozenset[str]:
    """Return the root variable names a tree reads (``user.address.city`` gives ``user``).

    Args:
        node: The root of the tree.

    Returns:
        The set of root names.

    """
    found: set[str] = set()
    pending: list[Node] = [node]
    # An explicit stack: the tree depth is capped, but iteration costs nothing extra.
    while pending:
        current = pending.pop()
        if isinstance(current, Var):
            found.add(current.path[0])
        pending.extend(children(current))
    return frozenset(found)


def tests_null(node: Node) -> bool:
    """Whether a tree tests for null itself.

    ``exists(x)``, a comparison with ``null`` and a variable read with a default all do.

    Args:
        node: The root of the tree.

    Returns:
        True when some node handles a missing value explicitly.

    """
    pending: list[Node] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Var) and current.default is not None:
            return True
        match current:
            case FunctionCall(name="exists"):
                return True
            case Compare(left=Literal(value=None)) | Compare(right=Literal(value=None)):
                return True
            case _:
                pending.extend(children(current))
    return False


def tree_depth(node: Node) -> int:
    """Return the number of levels in a tree (a lone literal or name is 1).

    Args:
        node: The root of the tree.

    Returns:
        The length of the longest root-to-leaf path, in nodes.

    """
    deepest = 0
    pending: list[tuple[Node, int]] = [(node, 1)]
    # Iterative on purpose: this is the check that makes the recursive passes safe.
    while pending:
        current, depth = pending.pop()
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in children(current))
    return deepest
