"""A store named on one line (``--store``): ``memory:``, ``sqlite:PATH`` or a Redis URL.

The checkpoint store and the event store take the same names; ``parse_store_spec`` reads one
for either, so both accept and refuse the same lines in the same words.
"""

from __future__ import annotations

from typing import Literal

from pipecat_steward.exceptions import StoreError

__all__ = ["FORMS", "StoreKind", "parse_store_spec"]

StoreKind = Literal["memory", "sqlite", "redis"]

FORMS = "memory:, sqlite:PATH or redis://HOST:PORT/DB"
"""The names a store takes, for messages."""

_REDIS = ("redis://", "rediss://", "unix://")


def parse_store_spec(spec: object, what: str) -> tuple[StoreKind, str]:
    """The backend ``spec`` names and what it opens (the SQLite path, the Redis URL).

    Args:
        spec: The line, e.g. ``sqlite:calls.db``.
        what: The store's kind for the message (``checkpoint``, ``event``).

    Raises:
        StoreError: ``spec`` is no text or names no backend (the message lists the forms).
    """
    if not isinstance(spec, str):
        raise StoreError(f"the {what} store is named by text ({FORMS}), not {type(spec).__name__}")
    if spec in ("memory", "memory:"):
        return "memory", ""
    if spec.startswith("sqlite:") and len(spec) > len("sqlite:"):
        return "sqlite", spec.removeprefix("sqlite:")
    if spec.startswith(_REDIS):
        return "redis", spec
    raise StoreError(f"unknown {what} store {spec!r}; use {FORMS}")
