"""One message for a pydantic ``ValidationError`` of a data file: the file, each place, each problem."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["validation_message"]

SHOWN = 10
"""The problems one message lists; a file broken throughout has as many as it has records."""


def validation_message(source: str, exc: ValidationError, item: str = "item") -> str:
    """``source: where: what`` for each problem, ``where`` naming a list's ``item`` by number."""
    problems = [f"{_where(e['loc'], item)}: {e['msg']}" for e in exc.errors()]
    more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return f"{source}: " + "; ".join(problems[:SHOWN]) + more


def _where(loc: tuple[int | str, ...], item: str) -> str:
    if not loc:
        return "top level"
    head, rest = loc[0], ".".join(map(str, loc[1:]))
    named = f"{item} {head}" if isinstance(head, int) else str(head)
    return f"{named}: {rest}" if rest else named
