"""Speaking for the LLM, recording engine-fired tool calls, and injecting notes.

- `emit_reply` pushes an LLM-shaped reply from inside an LLM service (or any processor in
  its place) instead of running inference. Downstream it is indistinguishable from a model
  reply: sentence-level TTS, the assistant aggregator's context write and its barge-in
  handling (only the sentences already spoken are kept) all behave as for real tokens. A
  `TTSSpeakFrame` would not: a barge-in during it records nothing in the context.
- `record_tool_exchange` writes an engine-fired tool call and its result into the context
  as an assistant `tool_calls` message followed by its `tool` message, so the next real
  request satisfies the provider's ordering rule (no orphan call).
- `inject_note` queues an `LLMMessagesAppendFrame` into the LLM service itself: the only
  entry point speech-to-speech services forward to their provider.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Literal, cast

from pipecat.frames.frames import (
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMMessagesAppendFrame,
    LLMTextFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext, LLMContextMessage
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.utils.string import match_endofsentence

NoteRole = Literal["developer", "user", "system"]
"""Role of an injected note. Speech-to-speech adapters map every role to what their
provider accepts (OpenAI Realtime: system item; Gemini Live and Nova Sonic: user text)."""

TOOL_CALL_ID_PREFIX = "steward_"
"""Prefix of the ids `record_tool_exchange` generates, so they are told apart from a
provider's own call ids in logs and traces."""


def split_sentences(text: str, *, language: str | None = None) -> list[str]:
    """Split `text` into sentences the way pipecat's TTS text aggregator does.

    Every piece after the first keeps its leading whitespace, so `"".join(pieces) == text`:
    the assistant aggregator concatenates `LLMTextFrame`s verbatim.

    Args:
        text: The reply to split.
        language: Language code for pipecat's sentence tokenizer (English by default).

    Returns:
        The sentences, in order; `[]` for empty text.

    """
    pieces: list[str] = []
    rest = text
    while rest.strip():
        end = match_endofsentence(rest, language=language)
        if end <= 0:
            break
        pieces.append(rest[:end])
        rest = rest[end:]
    if rest.strip():
        pieces.append(rest)
    return pieces


async def emit_reply(processor: FrameProcessor, text: str, *, language: str | None = None) -> None:
    """Push `text` downstream as an LLM reply: Start, one `LLMTextFrame` per sentence, End.

    Call it from the LLM service's `process_frame` in place of the inference (or from a
    processor standing in for it). Pushing through the service keeps its own bookkeeping
    (the speculation gate, `skip_tts`) on these frames.

    Args:
        processor: The LLM service (or the processor acting for it) that pushes the frames.
        text: What the bot says.
        language: Language for sentence splitting.

    """
    await processor.push_frame(LLMFullResponseStartFrame(), FrameDirection.DOWNSTREAM)
    for sentence in split_sentences(text, language=language):
        await processor.push_frame(LLMTextFrame(sentence), FrameDirection.DOWNSTREAM)
    await processor.push_frame(LLMFullResponseEndFrame(), FrameDirection.DOWNSTREAM)


def new_tool_call_id() -> str:
    """Return a fresh tool call id in OpenAI's shape (`steward_<hex>`)."""
    return f"{TOOL_CALL_ID_PREFIX}{uuid.uuid4().hex[:24]}"


def tool_exchange_messages(
    name: str, args: Mapping[str, Any], result: Any, *, tool_call_id: str
) -> list[dict[str, Any]]:
    """Build the assistant tool-call message and the tool-result message for one call.

    The shapes match what pipecat's assistant aggregator writes for a model's own call, so
    every adapter converts them like any other tool exchange.
    """
    call = {
        "id": tool_call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(dict(args), ensure_ascii=False)},
    }
    return [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": tool_call_id, "content": _tool_content(result)},
    ]


def record_tool_exchange(
    context: LLMContext,
    name: str,
    args: Mapping[str, Any],
    result: Any,
    *,
    tool_call_id: str | None = None,
) -> str:
    """Append an engine-fired call and its result to `context`, as one adjacent pair.

    Args:
        context: The shared LLM context.
        name: The tool (executor) name.
        args: The arguments it ran with.
        result: Its JSON-serialisable result.
        tool_call_id: The id to use; a fresh `steward_…` id when omitted.

    Returns:
        The tool call id written.

    """
    call_id = tool_call_id or new_tool_call_id()
    messages = tool_exchange_messages(name, args, result, tool_call_id=call_id)
    context.add_messages(cast(list[LLMContextMessage], messages))
    return call_id


async def inject_note(
    llm_service: FrameProcessor, text: str, *, run_llm: bool, role: NoteRole = "developer"
) -> LLMMessagesAppendFrame:
    """Queue a note into the LLM service so every kind of LLM receives it.

    The frame enters the service's own input queue: a speech-to-speech service sends it to
    its provider, then passes it on; the assistant aggregator writes it into the context
    and, with `run_llm`, asks for a response (deferred while the bot or user is speaking).
    It is marked uninterruptible so a barge-in cannot drop it from the queue.

    Args:
        llm_service: The pipeline's LLM service.
        text: The note.
        run_llm: Whether the model should respond to it.
        role: The message role (`developer` by default).

    Returns:
        The queued frame.

    """
    note = cast(LLMContextMessage, {"role": role, "content": text})
    frame = LLMMessagesAppendFrame(messages=[note], run_llm=run_llm)
    frame.interruptible = False
    await llm_service.queue_frame(frame)
    return frame


def _tool_content(result: Any) -> str:
    # Mirror the assistant aggregator, which JSON-encodes every result (strings too).
    return json.dumps(result, ensure_ascii=False)
