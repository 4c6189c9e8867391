"""Compile a syntax tree into nested closures, once, at parse time.

Conditions are evaluated on the engine's hot path every turn, so the tree is not walked at
evaluation time: each node becomes a closure that calls its children's closures directly,
constant sub-expressions are folded, and the common shapes (a comparison against a constant,
a one-argument call, a plain variable) get specialised closures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from pipecat_steward.core.expressions import nodes
from pipecat_steward.core.expressions.functions import IMPLEMENTATIONS
from pipecat_steward.core.expressions.nodes import Node, free_names
from pipecat_steward.core.expressions.operators import (
    ARITHMETIC,
    COMPARISONS,
    UNARY,
    BinaryOp,
    is_mapping,
    truthy,
)

__all__ = ["Evaluator", "compile_tree"]

Evaluator = Callable[[Mapping[str, object]], object]
"""A compiled expression: variables in, value out."""

_NO_VARIABLES: Mapping[str, object] = {}


def compile_tree(node: Node) -> Evaluator:
    """Compile a tree into a closure, folding sub-expressions that read no variable.

    Args:
        node: The root of the tree.

    Returns:
        A function of the variables mapping that computes the expression's value.

    """
    evaluator = _compile(node)
    if isinstance(node, nodes.Literal) or free_names(node):
        return evaluator
    value = evaluator(_NO_VARIABLES)
    # Only immutable results are shared between evaluations; a list is rebuilt each time.
    if value is None or isinstance(value, bool | int | float | str):
        return _constant(value)
    return evaluator


def _compile(node: Node) -> Evaluator:
    """Dispatch on the node type."""
    match node:
        case nodes.Literal(value=value):
            return _constant(value)
        case nodes.ListNode(items=items):
            return _list([compile_tree(item) for item in items])
        case nodes.Var():
            return _variable(node)
        case nodes.FunctionCall(name=name, args=args):
            return _apply(IMPLEMENTATIONS[name], compile_tree(args[0]))
        case nodes.Unary(op=op, operand=operand):
            return _apply(UNARY[op], compile_tree(operand))
        case nodes.Arith():
            return _arith(node)
        case nodes.Compare():
            return _compare(node)
        case nodes.BoolOp(op=op, operands=operands):
            return _bool(op == "and", [compile_tree(operand) for operand in operands])


def _constant(value: object) -> Evaluator:
    def constant(variables: Mapping[str, object]) -> object:
        return value

    return constant


def _list(items: Sequence[Evaluator]) -> Evaluator:
    def build(variables: Mapping[str, object]) -> object:
        return [item(variables) for item in items]

    return build


def _apply(function: Callable[[object], object], operand: Evaluator) -> Evaluator:
    """Compile a one-operand function: an allow-listed call or a prefix operator."""

    def apply(variables: Mapping[str, object]) -> object:
        return function(operand(variables))

    return apply


def _variable(node: nodes.Var) -> Evaluator:
    """Compile a variable read: the root from the mapping, then nested mapping keys."""
    name, rest = node.path[0], node.path[1:]
    read = _path(name, rest) if rest else _root(name)
    if node.default is None:
        return read
    return _with_default(read, compile_tree(node.default))


def _root(name: str) -> Evaluator:
    def read(variables: Mapping[str, object]) -> object:
        return variables.get(name)

    return read


def _path(name: str, keys: tuple[str, ...]) -> Evaluator:
    def read(variables: Mapping[str, object]) -> object:
        value = variables.get(name)
        for key in keys:
            # A dict check first: it is the usual case and much cheaper than the ABC check.
            if isinstance(value, dict):
                value = cast("dict[object, object]", value).get(key)
            elif is_mapping(value):
                value = value.get(key)
            else:
                return None
        return value

    return read


def _with_default(read: Evaluator, default: Evaluator) -> Evaluator:
    def read_or_default(variables: Mapping[str, object]) -> object:
        value = read(variables)
        return default(variables) if value is None else value

    return read_or_default


def _arith(node: nodes.Arith) -> Evaluator:
    """Compile a flat chain; a single operation gets a closure without a loop."""
    first = compile_tree(node.first)
    steps = [(ARITHMETIC[op], compile_tree(operand)) for op, operand in node.rest]
    if len(steps) == 1:
        return _binary(steps[0][0], first, steps[0][1])

    def chain(variables: Mapping[str, object]) -> object:
        value = first(variables)
        for function, operand in steps:
            value = function(value, operand(variables))
        return value

    return chain


def _binary(function: BinaryOp, left: Evaluator, right: Evaluator) -> Evaluator:
    def apply(variables: Mapping[str, object]) -> object:
        return function(left(variables), right(variables))

    return apply


def _compare(node: nodes.Compare) -> Evaluator:
    """Compile a comparison; a constant right side is captured as a value, not a closure."""
    function = COMPARISONS[node.op]
    left = compile_tree(node.left)
    if free_names(node.right):
        return _binary(function, left, compile_tree(node.right))
    constant = compile_tree(node.right)(_NO_VARIABLES)

    def against_constant(variables: Mapping[str, object]) -> object:
        return function(left(variables), constant)

    return against_constant


def _bool(is_and: bool, operands: Sequence[Evaluator]) -> Evaluator:
    """Compile ``and``/``or`` with Python semantics: short-circuit, return the deciding value."""

    def decide(variables: Mapping[str, object]) -> object:
        value: object = None
        for operand in operands:
            value = operand(variables)
            # 'and' stops at the first falsy operand, 'or' at the first truthy one.
            if truthy(value) != is_and:
                return value
        return value

    return decide
