"""Total semantics of the grammar's operators.

Every function here returns a value for any input and never raises: conditions run on the
engine's hot path over values that came from an LLM, so a type mismatch must read as "no"
rather than crash a turn. The rules:

* null (None) propagates through arithmetic; ``< <= > >= in`` and ``not in`` with a null
  operand are False; ``==`` and ``!=`` compare null normally.
* Operands of incompatible types (``"a" + 1``, ``"a" < 3``, ``1 / 0``) give null.
* bool is not a number: ``true + 1`` is null and ``true == 1`` is False.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeGuard

__all__ = [
    "ARITHMETIC",
    "COMPARISONS",
    "UNARY",
    "add",
    "contains",
    "div",
    "equal",
    "is_mapping",
    "is_number",
    "is_sequence",
    "logical_not",
    "mul",
    "negate",
    "not_contains",
    "not_equal",
    "sub",
    "truthy",
]

BinaryOp = Callable[[object, object], object]

_PLAIN_NUMBERS = frozenset({int, float})
_PLAIN_SCALARS = frozenset({int, float, str, type(None)})


def is_number(value: object) -> TypeGuard[int | float]:
    """Return True for an int or float that is not a bool."""
    # A tuple of types: isinstance over a union type object is several times slower.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_sequence(value: object) -> TypeGuard[Sequence[object]]:
    """Return True for a list or tuple (strings are not sequences here)."""
    return isinstance(value, (list, tuple))


def is_mapping(value: object) -> TypeGuard[Mapping[object, object]]:
    """Return True for any mapping (a nested object in the session state)."""
    return isinstance(value, Mapping)


def truthy(value: object) -> bool:
    """Python truthiness that cannot raise; null and failures read as False."""
    try:
        return bool(value)
    except Exception:  # a hostile __bool__ must not break a turn
        return False


def negate(value: object) -> object:
    """Unary minus of a number, else null."""
    return -value if is_number(value) else None


def logical_not(value: object) -> bool:
    """Boolean negation by :func:`truthy`, so it cannot raise either."""
    return not truthy(value)


def add(left: object, right: object) -> object:
    """Add numbers, concatenate strings or lists; anything else is null."""
    if is_number(left) and is_number(right):
        return _numeric(operator.add, left, right)
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if is_sequence(left) and is_sequence(right):
        return [*left, *right]
    return None


def sub(left: object, right: object) -> object:
    """Subtract numbers, else null."""
    return _numeric(operator.sub, left, right)


def mul(left: object, right: object) -> object:
    """Multiply numbers, else null (no string repetition: it could exhaust memory)."""
    return _numeric(operator.mul, left, right)


def div(left: object, right: object) -> object:
    """Divide numbers (true division); division by zero is null."""
    return _numeric(_true_divide, left, right)


def _true_divide(left: float, right: float) -> float:
    return left / right


def _numeric(function: Callable[[Any, Any], object], left: object, right: object) -> object:
    """Apply an arithmetic function to two numbers; overflow or zero division gives null."""
    if not (is_number(left) and is_number(right)):
        return None
    try:
        return function(left, right)
    except ArithmeticError:  # ZeroDivisionError, and OverflowError from huge int -> float
        return None


def equal(left: object, right: object) -> bool:
    """Structural equality where bool never equals a number; never raises."""
    if type(left) in _PLAIN_SCALARS and type(right) in _PLAIN_SCALARS:
        return left == right  # hot-path shortcut; these types cannot raise or alias bool
    try:
        return _equal(left, right)
    except Exception:  # hostile __eq__ or a self-referential container
        return False


def not_equal(left: object, right: object) -> bool:
    """Negation of :func:`equal`."""
    return not equal(left, right)


def _equal(left: object, right: object) -> bool:
    """Compare recursively, keeping bool apart from int inside containers too."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if is_sequence(left) and is_sequence(right):
        return len(left) == len(right) and all(map(_equal, left, right))
    if is_mapping(left) and is_mapping(right):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    return bool(left == right)


def _ordering(test: Callable[[Any, Any], bool]) -> BinaryOp:
    """Build an ordering comparison over two numbers or two strings."""

    def compare(left: object, right: object) -> object:
        # Exact-type fast path first: this runs on the hot path of most conditions.
        if type(left) in _PLAIN_NUMBERS and type(right) in _PLAIN_NUMBERS:
            return test(left, right)
        if left is None or right is None:
            return False
        if (is_number(left) and is_number(right)) or (
            isinstance(left, str) and isinstance(right, str)
        ):
            return test(left, right)
        return None

    return compare


def contains(item: object, container: object) -> object:
    """``item in container`` for a substring, list member or mapping key."""
    if item is None or container is None:
        return False
    if isinstance(container, str):
        return item in container if isinstance(item, str) else None
    if is_sequence(container):
        return any(equal(item, element) for element in container)
    if is_mapping(container):
        try:
            return item in container
        except TypeError:  # unhashable item: it cannot be a key
            return False
    return None


def not_contains(item: object, container: object) -> object:
    """``item not in container``; False when either side is null, null when incompatible."""
    if item is None or container is None:
        return False
    found = contains(item, container)
    return None if found is None else not found


UNARY: Mapping[str, Callable[[object], object]] = {"-": negate, "not": logical_not}

ARITHMETIC: Mapping[str, BinaryOp] = {"+": add, "-": sub, "*": mul, "/": div}

COMPARISONS: Mapping[str, BinaryOp] = {
    "==": equal,
    "!=": not_equal,
    "<": _ordering(operator.lt),
    "<=": _ordering(operator.le),
    ">": _ordering(operator.gt),
    ">=": _ordering(operator.ge),
    "in": contains,
    "not in": not_contains,
}
