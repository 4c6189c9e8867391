"""Generate ``docs/events.md`` from the event models (a test keeps the file in step).

Run ``python -m pipecat_steward.events.docs > docs/events.md`` after changing the schema.
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic.fields import FieldInfo

from pipecat_steward.events.schema import SCHEMA_VERSION, ChecklistStep, EventBase, event_kinds

__all__ = ["events_markdown"]

_INTRO = """# Conversation events (schema version {version})

Everything that matters in a call is one typed event: what the caller said, what the bot actually
said (and where it came from), every tool call and its outcome, slot changes, the engine's
decisions, the checklist, gate decisions, logic_slm checks, corrections, the transaction and
checkpoints. One publisher per call numbers and redacts them; they are kept per session in the
configured store (SQLite by default, a Redis stream when Redis is the store), fanned out live to
subscribers (the studio), sent to the pipecat client as RTVI server messages, and the
`steward simulate --json` trace is built from them
(`pipecat_steward.events.trace.traces_from_events`). A session has one live publisher: when
`EventHub.open` is asked for a session that is still live (a caller reconnecting to it), it ends
the previous publisher first (`call_ended`, status `replaced`) and the new one numbers its
events after it, so no event is written twice under one number. Across workers the store keeps
that rule: each `open` claims the session in the store, and a worker that lost the call but still
runs has its events refused from then on (its publisher is `fenced`; it logs one warning), so it
can neither overwrite the new owner's events nor write between them. A call's checkpoint is
written only once every event before it is stored: a worker killed right after a checkpoint
leaves in the store every event of the progress that checkpoint holds, and the worker that
resumes the call from it numbers its own events after them. (Events of the moments after the
last checkpoint may be lost with the worker, as that progress is: the call resumes before it.)

## On the RTVI client

The events reach the client with the steward's own client messages (checklist status, rich
response parts) when the steward flushes them: at the end of each inference, and when the engine
speaks in place of the model. While the model's tool calls chain into another inference of the
same turn, the events wait for that inference's flush (checklist status does not wait), so a
turn's events cross the pipeline in one message rather than one per hop; a call that is ending
sends them at once. All the events of one flush travel in ONE RTVI server message, in `seq`
order:

```json
{{"type": "steward_events", "version": 1, "events": [{{"kind": "caller_transcript", "seq": 2, ...}}, ...]}}
```

`version` is the version of this envelope (it changes only if `type`, `version` or `events`
change); each item of `events` is one event as described below. Events recorded after a call's
last inference reach only the store and the subscribers. A steward built with
`client_messages=False`, for a call no client reads (a telephone call), sends the client
nothing, and neither does one not told either way whose pipeline has no RTVI observer to
deliver its messages; their events still reach the store and the subscribers.

Sensitive values are redacted before an event exists, exactly as traces and logs redact them:
no store, subscriber or client ever sees one. Whatever carries a value, an event holds only
JSON's own types: a set becomes a list, bytes and other objects become their text, and every
string among them, keys included, is redacted.

The publisher keeps a call's events as their JSON text, as the stores do: `publisher.events`
parses them into new models at each read. A live call holds its events for as long as it runs,
and text is nothing the cycle collector has to walk.

## Compatibility

`schema_version` is {version}. Within a version, changes are additive only: a new kind, or a new
field with a default. Renaming or removing a field, or changing what it means, bumps the version.
Readers skip kinds they do not know (`parse_event_or_none`), so an older reader can replay a
newer call.

## Fields every event carries

{common}

## Kinds
"""


def events_markdown() -> str:
    """The whole of ``docs/events.md``."""
    common = _table(EventBase.model_fields, EventBase.model_fields)
    parts = [_INTRO.format(version=SCHEMA_VERSION, common=common)]
    for kind, model in event_kinds().items():
        doc = inspect.cleandoc(model.__doc__ or "")
        own = {n: f for n, f in model.model_fields.items() if n not in EventBase.model_fields}
        parts.append(f"### `{kind}`\n\n{doc}\n\n{_table(own, model.model_fields)}\n")
    step = _table(ChecklistStep.model_fields, ChecklistStep.model_fields)
    parts.append(f"### `ChecklistStep` (in `checklist.steps`)\n\n{step}\n")
    return "\n".join(parts)


def _table(fields: dict[str, FieldInfo], _all: dict[str, FieldInfo]) -> str:
    rows = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in fields.items():
        meaning = (info.description or "").replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(info.annotation)} | {_default(info)} | {meaning} |")
    return "\n".join(rows)


def _type(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation)
    for noise in ("typing.", "pipecat_steward.events.schema."):
        text = text.replace(noise, "")
    return f"`{text}`".replace("|", "\\|")


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return f"`{info.default_factory()!r}`"  # type: ignore[call-arg]
    return f"`{info.default!r}`".replace("|", "\\|")


if __name__ == "__main__":
    print(events_markdown(), end="")
