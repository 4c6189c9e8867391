"""The scripting vocabulary shared by `ScriptedLLM` and the provider fakes.

A step is one model response: `Say` some text, `Call` a tool, or several of them (text is
emitted before the calls, as models stream it). A plain string is shorthand for `Say`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True, slots=True)
class Say:
    """Say `text`."""

    text: str


@dataclass(frozen=True, slots=True)
class Call:
    """Call tool `name` with `args`; `tool_call_id` is generated when omitted."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    tool_call_id: str | None = None


Action: TypeAlias = Say | Call
Step: TypeAlias = Action | str | Sequence[Action]
"""One model response: a `Say`, a `Call`, a plain string (a `Say`), or several actions."""


def split_step(step: Step) -> tuple[str, list[Call]]:
    """Return a step's text (its `Say`s joined by spaces) and its calls, in order."""
    items: Sequence[Any] = [step] if isinstance(step, (Say, Call, str)) else step
    texts = [item.text if isinstance(item, Say) else item for item in items]
    said = " ".join(t for t in texts if isinstance(t, str) and t)
    return said, [item for item in items if isinstance(item, Call)]
