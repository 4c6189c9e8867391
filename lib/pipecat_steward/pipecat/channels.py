"""How the steward can reach each kind of LLM: the delivery-channel capability table.

Verified against pipecat 1.14 (see `docs/providers.md` for the evidence per cell):

| channel            | cascaded | openai_realtime | gemini_live | nova_sonic |
|--------------------|----------|-----------------|-------------|------------|
| silent_note        | yes      | yes             | yes         | no*        |
| note_and_response  | yes      | yes             | yes         | yes        |
| instruction_update | yes      | yes             | no          | no         |
| tool_set_update    | yes      | yes             | no          | no         |
| tool_result_rider  | yes      | yes             | yes         | yes        |
| interrupt          | yes      | yes             | no          | no         |
| per_inference_hook | yes      | no              | no          | no         |

* Pipecat can put a non-interactive USER text on Nova's wire mid-session, but Nova documents
  history only before audio starts (Nova has no silent channel), so the steward treats
  it as absent: corrections ride the next tool result instead.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class LLMKind(StrEnum):
    """The families of LLM service the steward tells apart."""

    CASCADED = "cascaded"
    OPENAI_REALTIME = "openai_realtime"
    GEMINI_LIVE = "gemini_live"
    NOVA_SONIC = "nova_sonic"


@dataclass(frozen=True, slots=True, kw_only=True)
class Channels:
    """What one kind of LLM service lets the steward do mid-call.

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
    silent_note: bool
    note_and_response: bool
    instruction_update: bool
    tool_set_update: bool
    tool_result_rider: bool
    interrupt: bool
    per_inference_hook: bool


CHANNELS: dict[LLMKind, Channels] = {
    LLMKind.CASCADED: Channels(
        kind=LLMKind.CASCADED,
        silent_note=True,
        note_and_response=True,
        instruction_update=True,
        tool_set_update=True,
        tool_result_rider=True,
        interrupt=True,
        per_inference_hook=True,
    ),
    # session.update carries instructions and tools; interrupting needs response.cancel
    # as well as broadcast_interruption() while server VAD is on (s2s-injection 1.1).
    LLMKind.OPENAI_REALTIME: Channels(
        kind=LLMKind.OPENAI_REALTIME,
        silent_note=True,
        note_and_response=True,
        instruction_update=True,
        tool_set_update=True,
        tool_result_rider=True,
        interrupt=True,
        per_inference_hook=False,
    ),
    # Settings updates are stored, not sent; LLMSetToolsFrame is dropped; an app-side
    # interruption sends nothing to the server (s2s-injection 1.2).
    LLMKind.GEMINI_LIVE: Channels(
        kind=LLMKind.GEMINI_LIVE,
        silent_note=True,
        note_and_response=True,
        instruction_update=False,
        tool_set_update=False,
        tool_result_rider=True,
        interrupt=False,
        per_inference_hook=False,
    ),
    # Tools and prompt are fixed at connect (reset_conversation() reconnects with a new
    # prompt); the interruption handler is a no-op (s2s-injection 1.3).
    LLMKind.NOVA_SONIC: Channels(
        kind=LLMKind.NOVA_SONIC,
        silent_note=False,  # on the wire but outside Nova's documented protocol (see above)
        note_and_response=True,
        instruction_update=False,
        tool_set_update=False,
        tool_result_rider=True,
        interrupt=False,
        per_inference_hook=False,
    ),
}


def detect_kind(llm_service: Any) -> LLMKind:
    """Classify a pipecat LLM service by the class it derives from.

    An instance of a speech-to-speech class means its module is already imported, so the
    classes are looked up in `sys.modules` rather than imported: each needs its own optional
    extra (Nova Sonic also Python >= 3.12). Anything else is a cascaded (text) LLM.
    """
    for kind, (module_name, class_name) in _S2S_CLASSES.items():
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type) and isinstance(llm_service, cls):
            return kind
    return LLMKind.CASCADED


def channels_for(llm_service: Any) -> Channels:
    """Return the capability row of `llm_service`'s kind."""
    return CHANNELS[detect_kind(llm_service)]


_S2S_CLASSES: dict[LLMKind, tuple[str, str]] = {
    LLMKind.OPENAI_REALTIME: ("pipecat.services.openai.realtime.llm", "OpenAIRealtimeLLMService"),
    LLMKind.GEMINI_LIVE: ("pipecat.services.google.gemini_live.llm", "GeminiLiveLLMService"),
    LLMKind.NOVA_SONIC: ("pipecat.services.aws.nova_sonic.llm", "AWSNovaSonicLLMService"),
}
