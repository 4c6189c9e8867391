"""A small JSONPath subset for ``result_path`` (``$.data.entry[0].resource.id``).

Supported: the root ``$``, member access ``.name`` and ``['name']`` / ``["name"]``, and
integer indexes ``[0]`` (negative counts from the end). Nothing else (no wildcards, filters or
recursive descent): a completion criterion must name one value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import cast

__all__ = ["MISSING", "Path", "is_nonempty", "parse_path", "select"]

Path = tuple[str | int, ...]

_TOKEN = re.compile(
    r"\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)"
    r"|\[(?P<index>-?\d+)\]"
    r"|\['(?P<single>[^']*)'\]"
    r'|\["(?P<double>[^"]*)"\]'
)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
"""What :func:`select` returns when the path leads nowhere."""


@lru_cache(maxsize=256)
def parse_path(text: str) -> Path:
    """Parse a path into member names and indexes.

    Raises:
        ValueError: Naming the column and what is supported, e.g. for ``$.a[*]``.
    """
    if not text.startswith("$"):
        raise ValueError(f"result_path {text!r} must start with '$', e.g. $.data.id")
    parts: list[str | int] = []
    pos = 1
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(
                f"result_path {text!r}: unsupported syntax at column {pos + 1}; "
                "use .name, ['name'] or [index]"
            )
        parts.append(_part(match))
        pos = match.end()
    return tuple(parts)


def _part(match: re.Match[str]) -> str | int:
    index = match.group("index")
    if index is not None:
        return int(index)
    for group in ("name", "single", "double"):
        value = match.group(group)
        if value is not None:
            return value
    raise AssertionError("unreachable: the token pattern has four alternatives")


def select(document: object, path: Path) -> object:
    """Return the value at ``path`` in ``document``, or :data:`MISSING`."""
    node = document
    for part in path:
        node = _step(node, part)
        if node is MISSING:
            return MISSING
    return node


def _step(node: object, part: str | int) -> object:
    if isinstance(part, str):
        if isinstance(node, Mapping):
            return cast(Mapping[str, object], node).get(part, MISSING)
        return MISSING
    if isinstance(node, Sequence) and not isinstance(node, (str, bytes)):
        items = cast(Sequence[object], node)
        return items[part] if -len(items) <= part < len(items) else MISSING
    return MISSING


def is_nonempty(value: object) -> bool:
    """True for a value that exists and carries something (not null, blank, ``[]`` or ``{}``)."""
    if value is MISSING or value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (Mapping, list, tuple)):
        return len(cast(Sequence[object], value)) > 0
    return True
