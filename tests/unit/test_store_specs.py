"""The checkpoint store and the event store read one store name the same way.

A Redis URL with a port that is no number raised redis-py's ``ValueError`` with no name of the
store; ``/x`` as the database was quietly database 0 (another call's data, in a shared Redis);
``None`` or a number stopped on ``AttributeError``. Both openers now read the name with one
parser and refuse these as a ``StoreError`` naming the line and what it takes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.events.store import open_event_store
from pipecat_steward.exceptions import StoreError
from pipecat_steward.storage.checkpoints import open_store

OPENERS: dict[str, Callable[[Any], Any]] = {"checkpoint": open_store, "event": open_event_store}

REFUSED: dict[str, tuple[Any, str]] = {
    "a port that is no number": ("redis://127.0.0.1:notaport/0", "Port could not be cast"),
    "a port out of range": ("redis://127.0.0.1:99999/0", "Port out of range"),
    "a database that is no number": ("redis://127.0.0.1:6379/x", "the database 'x' is no whole"),
    "a bad option": ("redis://127.0.0.1:6379/0?socket_timeout=abc", "socket_timeout"),
    "sqlite without a path": ("sqlite:", "unknown {what} store 'sqlite:'; use memory:"),
    "memory with a name": ("memory:calls", "unknown {what} store"),
    "nothing": ("", "unknown {what} store ''"),
    "an upper-case scheme": ("SQLITE:calls.db", "unknown {what} store"),
    "None": (None, "the {what} store is named by text (memory:, sqlite:PATH or redis://"),
    "a number": (5, "is named by text (memory:, sqlite:PATH or redis://HOST:PORT/DB), not int"),
}


@pytest.mark.parametrize("what", list(OPENERS))
@pytest.mark.parametrize("case", list(REFUSED))
def test_a_store_name_that_opens_nothing_is_refused_alike(what: str, case: str) -> None:
    spec, words = REFUSED[case]
    with pytest.raises(StoreError) as caught:
        OPENERS[what](spec)
    assert words.format(what=what) in str(caught.value)


TAKEN = [
    "memory:",
    "memory",
    "sqlite:{tmp}/calls.db",
    "redis://127.0.0.1:6379/0",
    "redis://",
    "rediss://127.0.0.1:6380/2",
    "unix://{tmp}/redis.sock?db=1",
]


@pytest.mark.parametrize("what", list(OPENERS))
@pytest.mark.parametrize("spec", TAKEN)
async def test_every_store_name_is_taken_by_both(what: str, spec: str, tmp_path: Path) -> None:
    store = OPENERS[what](spec.format(tmp=tmp_path))  # nothing connects until it is used
    await store.close()
