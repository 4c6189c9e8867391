"""Text the engine hands the LLM: questions, readbacks, hints and the phase suffix.

The suffix is one phase block — collection OR readback, never both, so the LLM never asks
and reads back in the same turn —
preceded by a sentinel so an adapter can replace the previous suffix instead of stacking them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pipecat_steward.core.slots.action import Hint, Phase
from pipecat_steward.core.slots.compiled import CompiledFlow, CompiledSlot
from pipecat_steward.core.slots.config import ResponsePart
from pipecat_steward.core.slots.readback import render, render_parts
from pipecat_steward.core.state import SessionState
from pipecat_steward.core.variables import JsonValue

__all__ = [
    "SENTINEL",
    "ask_text",
    "build_suffix",
    "readback_text",
    "resolve_response",
    "summary",
]

SENTINEL = "<!-- steward -->"

_COLLECTION = (
    "You collect information through tools; deterministic code decides what comes next.\n"
    "- When the caller gives a value, call its setter right away (several setters in one reply "
    "when they give several values). Prepare arguments as each tool describes.\n"
    "- Relay the <system_directive> naturally; keep exact values and confirmation numbers.\n"
    "- If the caller asks a question, answer it first, then return to the directive.\n"
    "- Never ask again for anything already given. If the caller refuses a question, call "
    "decline_slot. If they change an earlier answer, call correct_slot."
)
_READBACK = (
    "Values are awaiting the caller's confirmation.\n"
    "- Read back the values in the <system_directive> and ask whether they are correct.\n"
    "- If the caller confirms, call confirm_pending; if they reject, call reject_pending.\n"
    "- If they change a value, call that value's setter with the new value.\n"
    "- If they confirm and add something new, call confirm_pending and the setters for the "
    "new details."
)

_READBACK_BLOCK = f"<readback_protocol>\n{_READBACK}\n</readback_protocol>"


def ask_text(flow: CompiledFlow, state: SessionState, names: Sequence[str]) -> str:
    """The question(s) for ``names``, with ``{slot}`` placeholders resolved."""
    return " ".join([_ask_one(flow.slot[n], state.variables) for n in names])


def _ask_one(slot: CompiledSlot, values: Mapping[str, JsonValue]) -> str:
    if slot.config.ask:
        return render(slot.config.ask, values)
    return f"What is the {slot.label.replace('_', ' ')}?"


def readback_text(flow: CompiledFlow, state: SessionState, names: Iterable[str]) -> str:
    """The readback sentence for pending ``names``, read to the caller before they are committed."""
    items = ", ".join(flow.slot[n].fmt(state.record(n).value) for n in names)
    return render(flow.config.readback_template, {"items": items})


def readback_scope(flow: CompiledFlow, state: SessionState, names: Iterable[str]) -> Hint:
    """The stronger grouped-readback hint."""
    lines = [f"  - {n}: {flow.slot[n].fmt(state.record(n).value)}" for n in names]
    head = "You MUST confirm ALL of the following values together in a single readback -- do NOT omit any:"
    return Hint("readback_scope", "\n".join([head, *lines]))


def deferred_hint(names: Sequence[str], question: str) -> Hint:
    """Tell the LLM not to read back values held for a grouped readback."""
    text = (
        f"The value(s) just collected ({', '.join(names)}) are noted and will be confirmed later "
        "together with related information. Do NOT read them back or ask for confirmation now."
    )
    return Hint("deferred_collection", f"{text} Instead, proceed to ask: {question}".strip())


def inferred_hint(flow: CompiledFlow, state: SessionState, names: Sequence[str]) -> Hint:
    """Ask the LLM to state inferences aloud so the caller can correct them."""
    lines = [
        f'  - {n}: {flow.slot[n].fmt(state.record(n).value)} (from "{state.record(n).source}")'
        for n in names
    ]
    head = (
        "State these inferred values aloud inside your next sentence, without making it a "
        "question, so the caller can correct them; then move on:"
    )
    return Hint("confirm_inferred", "\n".join([head, *lines]))


_PROTOCOL_CACHE_LIMIT = 256


def protocol_block(flow: CompiledFlow, visible: Iterable[str]) -> str:
    """The ``<slot_filling_protocol>`` block with the hint → setter tool-selection guide.

    The block depends on the flow and the visible set only, so it is cached per flow
    (``CompiledFlow.protocol_blocks``) keyed by the frozen visible set; the cache is bounded
    and only ever returns what this function would build.
    """
    shown = visible if isinstance(visible, frozenset) else frozenset(visible)
    return visible_derived(flow, shown)[0]


def visible_derived(
    flow: CompiledFlow, visible: frozenset[str]
) -> tuple[str, frozenset[str], tuple[str, ...]]:
    """What a visible set determines: the protocol block, the hidden tools and the sorted names.

    Cached per flow in ``CompiledFlow.protocol_blocks``, keyed by the frozen set (bounded).
    """
    cache = flow.protocol_blocks
    derived = cache.get(visible)
    if derived is None:
        derived = (
            _protocol_block(flow, visible),
            flow.tool_names - visible,
            tuple(sorted(visible)),
        )
        if len(cache) >= _PROTOCOL_CACHE_LIMIT:
            cache.clear()
        cache[visible] = derived
    return derived


def _protocol_block(flow: CompiledFlow, shown: frozenset[str]) -> str:
    guide = [
        f"- {s.config.hint or s.label.replace('_', ' ')} → {s.config.setter}"
        for s in flow.slots
        if s.config.setter in shown
    ]
    body = _COLLECTION + ("\nTool selection:\n" + "\n".join(guide) if guide else "")
    return f"<slot_filling_protocol>\n{body}\n</slot_filling_protocol>"


def build_suffix(
    flow: CompiledFlow, phase: Phase, directive: str, hints: Sequence[Hint], visible: Iterable[str]
) -> str:
    """Assemble the instruction suffix for one phase."""
    if phase == "terminal":
        return ""
    block = _READBACK_BLOCK if phase == "readback" else protocol_block(flow, visible)
    parts = [SENTINEL, block, *[h.render() for h in hints]]
    if directive:
        parts.append(f"<system_directive>\n{directive}\n</system_directive>")
    return "\n".join(parts)


def resolve_response(
    state: SessionState,
    response: list[ResponsePart] | None,
    by_channel: Mapping[str, list[ResponsePart]],
) -> tuple[ResponsePart, ...]:
    """Pick the channel's parts, else the default ones, and substitute ``{slot}``."""
    parts = by_channel.get(state.channel) if state.channel else None
    chosen = parts if parts is not None else response
    if not chosen:
        return ()
    return tuple([_part(render_parts(p, state.variables)) for p in chosen])


def _part(value: JsonValue) -> ResponsePart:
    return value if isinstance(value, dict) else {"type": "text", "text": str(value)}


def summary(flow: CompiledFlow, state: SessionState) -> str:
    """A one-line summary of what was collected, for hand-overs (sensitive-free by design: only slot labels and readback-formatted values)."""
    items = [
        f"{s.label.replace('_', ' ')}: {s.fmt(state.record(s.name).value)}"
        for s in flow.slots
        if s.is_user and state.record(s.name).settled
    ]
    return "; ".join(items) if items else "nothing yet"
