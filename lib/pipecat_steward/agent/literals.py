"""Conditions that compare a typed variable with a value it can never hold.

``customer_auth_status == "verifed"`` parses and reads a declared variable, but when the
variable is an enum of ``unverified, pending, verified`` it can never be true: the gate never
opens, the step never completes. Likewise a number compared with ``"verified"``. These are
found before a call, from the variable's (or the slot's) declared type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pipecat_steward.core.expressions.nodes import Compare, ListNode, Literal, Node, Var, children
from pipecat_steward.core.expressions.parser import parse_tree
from pipecat_steward.exceptions import ConfigError

__all__ = ["Typed", "impossible_comparisons"]

_TRUTHS = frozenset({"true", "false", "yes", "no", "y", "n", "1", "0", "on", "off"})


@dataclass(frozen=True, slots=True)
class Typed:
    """A declared type and, for an enum, its values."""

    type: str
    values: tuple[str, ...] = ()


def impossible_comparisons(text: str, types: Mapping[str, Typed]) -> list[str]:
    """What is wrong with each literal ``text`` compares a typed variable with (empty if none)."""
    try:
        tree, _ = parse_tree(text, allow_lambda=True)
    except (ConfigError, RecursionError):
        return []  # an unparsable condition is reported where it is parsed
    problems: list[str] = []
    for name, literal in _pairs(tree):
        spec = types.get(name)
        problem = _mismatch(name, spec, literal) if spec is not None else None
        if problem:
            problems.append(problem)
    return list(dict.fromkeys(problems))


def _pairs(node: Node) -> Iterator[tuple[str, object]]:
    """(variable, literal) for ``v == lit``, ``lit != v`` and ``v in [lit, …]``."""
    if isinstance(node, Compare):
        left, right = node.left, node.right
        if isinstance(right, Var) and not isinstance(left, Var):
            left, right = right, left
        if isinstance(left, Var) and len(left.path) == 1:
            items = right.items if isinstance(right, ListNode) and "in" in node.op else (right,)
            for item in items:
                if isinstance(item, Literal) and item.value is not None:
                    yield left.path[0], item.value
    for child in children(node):
        yield from _pairs(child)


def _mismatch(name: str, spec: Typed, value: object) -> str | None:
    if spec.type == "enum" and isinstance(value, str) and value not in spec.values:
        return f"{name!r} is one of {', '.join(spec.values)}; it is never {value!r}"
    if spec.type in ("integer", "number") and isinstance(value, str) and not _numeric(value):
        return f"{name!r} is a {spec.type}; it is never {value!r}"
    if spec.type == "boolean" and isinstance(value, str) and value.lower() not in _TRUTHS:
        return f"{name!r} is a boolean; it is never {value!r}"
    return None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
