"""The allow-listed functions a condition may call.

Each function takes one argument and is total: a value it cannot handle gives null, so
``int("abc")`` is null and ``len(5)`` is null. The parser rejects any other name, which is
what keeps a condition from reaching anything but these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from pipecat_steward.core.expressions.operators import is_mapping, is_sequence

__all__ = ["ARITY", "FUNCTIONS", "IMPLEMENTATIONS"]

ARITY = 1
"""Every allow-listed function takes exactly this many arguments."""


def _len(value: object) -> object:
    """Length of a string, list or mapping."""
    if isinstance(value, str) or is_sequence(value) or is_mapping(value):
        return len(value)
    return None


def _lower(value: object) -> object:
    """Lower-cased string."""
    return value.lower() if isinstance(value, str) else None


def _upper(value: object) -> object:
    """Upper-cased string."""
    return value.upper() if isinstance(value, str) else None


def _int(value: object) -> object:
    """Integer from a number, bool or numeric string (``"6"``, ``" 6 "``, ``"6.0"``)."""
    if type(value) is int:  # the common case, without a conversion
        return value
    if isinstance(value, int):
        # Explicit conversion is the one place a bool becomes a number, as in Python.
        return int(value)
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return _int_from_text(value)
    return None


def _int_from_text(text: str) -> int | None:
    """Parse an integer, accepting a float spelling since LLM-sourced values vary."""
    try:
        return int(text)
    except ValueError:
        pass
    number = _float(text)
    return int(number) if isinstance(number, float) and math.isfinite(number) else None


def _float(value: object) -> object:
    """Float from a number, bool or numeric string."""
    if not isinstance(value, int | float | str):  # bool is an int subclass, so it passes
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):  # "abc", or an int too large for a float
        return None


def _str(value: object) -> object:
    """Convert to a string; null stays null so a missing value stays missing."""
    if value is None or isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # an int beyond the digit limit, or a hostile __str__
        return None


def _exists(value: object) -> object:
    """Tell whether the value is not null."""
    return value is not None


IMPLEMENTATIONS: Mapping[str, Callable[[object], object]] = {
    "len": _len,
    "lower": _lower,
    "upper": _upper,
    "int": _int,
    "float": _float,
    "str": _str,
    "exists": _exists,
}

FUNCTIONS: frozenset[str] = frozenset(IMPLEMENTATIONS)
"""The names a condition may call."""
