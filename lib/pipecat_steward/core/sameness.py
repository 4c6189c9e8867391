"""Whether two values are the same value: equal, and of the same type all the way down.

Python's ``==`` calls ``True`` equal to ``1`` and ``False`` to ``0`` and ``0.0``. A condition
tells them apart (in an expression a bool never equals a number), and so do the traces, the
events and the client, which show the value as it is. So every check of whether a value on the
blackboard changed (a write, a change event, a cache of what was worked out from the variables)
compares with ``same_value``: a write of ``0`` over ``False`` is a change.
"""

from __future__ import annotations

from typing import cast

__all__ = ["same_value"]


def same_value(left: object, right: object) -> bool:
    """``left == right``, with every value inside of the same type on both sides.

    Equality is tried first (at C speed, and most comparisons find a difference there); only
    equal values are walked to compare their types. One object is the same value as itself,
    as Python's own container comparison assumes (a caller's copy of a mapping shares its
    values, so comparing it with the live one costs one identity check per entry).
    """
    return left is right or (bool(left == right) and _same_types(left, right))


def _same_types(left: object, right: object) -> bool:
    """Whether two equal values have the same types all through (containers walked)."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is dict:
        other = cast(dict[object, object], right)
        for key, value in cast(dict[object, object], left).items():
            paired = other[key]  # equal dicts have the same keys
            if value is not paired and not _same_types(value, paired):
                return False
        return True
    if kind is list or kind is tuple:
        pairs = zip(cast(list[object], left), cast(list[object], right), strict=True)
        return all(a is b or _same_types(a, b) for a, b in pairs)
    return True
