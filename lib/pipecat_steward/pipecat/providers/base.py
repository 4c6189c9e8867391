"""What every provider adapter offers: its delivery channels and its session/tool/response quirks.

An adapter wraps one pipecat LLM service. The steward never asks which provider it talks to;
it asks the adapter what the service can do (``channels``) and lets the adapter do it
(``send_note``, ``update_session``, ``send_tool_result``, ``interrupt`` …). The defaults are
what every pipecat service does the same way; an adapter overrides only where its provider
differs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.services.llm_service import FunctionCallParams

from pipecat_steward.pipecat.preempt import inject_note

__all__ = ["Channels", "LLMKind", "ProviderAdapter"]


class LLMKind(StrEnum):
    """The families of LLM service the steward tells apart (one adapter each)."""

    CASCADED = "cascaded"
    OPENAI_REALTIME = "openai_realtime"
    GEMINI_LIVE = "gemini_live"
    NOVA_SONIC = "nova_sonic"


@dataclass(frozen=True, slots=True, kw_only=True)
class Channels:
    """What one kind of LLM service lets the steward do mid-call.

    The defaults are what every speech-to-speech service offers (a note that asks for a reply,
    text riding a tool result); an adapter names the channels it adds.

    Attributes:
        kind: The LLM family.
        silent_note: A note enters the model's context without a response
            (`inject_note(..., run_llm=False)` reaches the provider).
        note_and_response: A note makes the model respond (`run_llm=True`).
        instruction_update: The system instruction can change mid-session
            (`LLMUpdateSettingsFrame(system_instruction=...)` is applied).
        tool_set_update: The visible tool set can change mid-session (`LLMSetToolsFrame` or
            `context.set_tools` takes effect); otherwise hidden tools need a veto.
        tool_result_rider: Text can ride inside a tool result the model reads.
        interrupt: The steward can stop the bot's speech from the app side.
        per_inference_hook: Every inference passes through the LLM service's
            `process_frame`, so the before-inference hook can set tools and preempt.

    """

    kind: LLMKind
    silent_note: bool = False
    note_and_response: bool = True
    instruction_update: bool = False
    tool_set_update: bool = False
    tool_result_rider: bool = True
    interrupt: bool = False
    per_inference_hook: bool = False


class ProviderAdapter:
    """The steward's view of one pipecat LLM service (subclass once per provider).

    Class attributes a subclass sets:
        kind: Its LLM family.
        channels: What the service lets the steward do mid-call.
        service: ``(module, class name)`` of the pipecat service it adapts, looked up in
            ``sys.modules`` (an instance of the class means its module is imported; each
            provider needs its own optional extra, so nothing is imported here).

    Attributes:
        llm: The adapted service.

    """

    kind: ClassVar[LLMKind]
    channels: ClassVar[Channels]
    service: ClassVar[tuple[str, str]]

    def __init__(self, llm: Any) -> None:
        """Adapt ``llm`` (an instance of the ``service`` class)."""
        self.llm = llm

    @classmethod
    def serves(cls, llm: Any) -> bool:
        """Whether ``llm`` is an instance of this adapter's service class (or a subclass)."""
        module_name, class_name = cls.service
        service_class = getattr(sys.modules.get(module_name), class_name, None)
        return isinstance(service_class, type) and isinstance(llm, service_class)

    @property
    def speech_to_speech(self) -> bool:
        """Whether the model runs on the provider's side (no per-inference hook)."""
        return not self.channels.per_inference_hook

    def needs_response_request(self) -> bool:
        """Whether the service leaves the reply to a caller turn to the app."""
        return False

    def advertise_tools(self, tools: ToolsSchema) -> None:
        """Before the session starts: make ``tools`` the session's tools where the service allows.

        Services whose tools are fixed at connect take them in their constructor instead.
        """

    async def update_session(self, *, tools: ToolsSchema, instructions: str) -> None:
        """Mid-session: replace the visible tools and the system instruction where supported."""

    async def send_note(self, text: str, *, run_llm: bool) -> None:
        """Put ``text`` into the model's context; with ``run_llm`` the model replies to it."""
        await inject_note(self.llm, text, run_llm=run_llm)

    async def send_tool_result(self, params: FunctionCallParams, result: Any) -> None:
        """Return a tool call's result to the model (the directive rides inside it)."""
        await params.result_callback(result)

    async def interrupt(self) -> None:
        """Stop the bot's speech from the app side (call only where ``channels.interrupt``)."""
        await self.llm.broadcast_interruption()
