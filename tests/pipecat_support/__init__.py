"""Shared helpers for the pipecat integration tests (real pipelines, offline fakes).

Import this module before any pipecat module (`# isort: split` after it). Some pipecat 1.14
modules warn while they are imported, and the suite turns warnings into errors, which
would fail collection: `pipecat.audio.utils` imports the stdlib `audioop` (deprecated on
Python 3.12), `pipecat.services.tts_service` subclasses its own deprecated
`AudioContextTTSService`, and the Nova Sonic module uses the `BedrockRuntimeClient` alias.
They are imported once here, ignoring exactly those messages; every later warning still
fails the test that causes it.
"""


from __future__ import annotations

from tests.pipecat_support import _quiet_imports  # noqa: F401  (must precede pipecat imports)

# isort: split

from collections.abc import Iterable
from typing import Any, TypeVar

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.services.llm_service import FunctionCallParams

from pipecat_steward.pipecat.events import SessionEvent
from pipecat_steward.pipecat.relay import StewardRelay

E = TypeVar("E")


def tool(name: str, **properties: str) -> FunctionSchema:
    """A function schema whose properties all have the given JSON types."""
    props = {key: {"type": kind} for key, kind in properties.items()}
    return FunctionSchema(name=name, description=f"{name} tool", properties=props, required=[])


def tools(*schemas: FunctionSchema) -> ToolsSchema:
    return ToolsSchema(standard_tools=list(schemas))


class EventLog:
    """Collects a relay's events through an ordinary bus subscription."""

    def __init__(self, relay: StewardRelay) -> None:
        self.events: list[SessionEvent] = []
        relay.bus.subscribe(self.events.append, name="event-log")

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self.events]

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]


class Recorder:
    """A tool handler that records its calls and answers with a fixed result."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, params: FunctionCallParams) -> None:
        self.calls.append(dict(params.arguments))
        await params.result_callback(self.result)


def messages_summary(messages: Iterable[Any]) -> list[tuple[str, str]]:
    """(role, text) per message; tool calls shown as `call:<name>`, results as `result:<json>`."""
    out: list[tuple[str, str]] = []
    for m in messages:
        if m.get("tool_calls"):
            out.append((m["role"], "call:" + ",".join(c["function"]["name"] for c in m["tool_calls"])))
        elif m.get("role") == "tool":
            out.append(("tool", "result:" + m["content"]))
        else:
            out.append((m["role"], m.get("content") or ""))
    return out
