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

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Say takes text, not {self.text!r}")


@dataclass(frozen=True, slots=True)
class Call:
    """Call tool `name` with `args`; `tool_call_id` is generated when omitted."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    tool_call_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Call takes a tool name, not {self.name!r}")
        if not isinstance(self.args, Mapping):
            raise TypeError(f"Call {self.name!r} takes its args as a mapping, not {self.args!r}")
        if self.tool_call_id is not None and not isinstance(self.tool_call_id, str):
            raise TypeError(f"Call {self.name!r} takes a tool_call_id as text or None")


Action: TypeAlias = Say | Call
Step: TypeAlias = Action | str | Sequence[Action]
"""One model response: a `Say`, a `Call`, a plain string (a `Say`), or several actions."""


def is_step(value: object) -> bool:
    """Whether ``value`` is a `Step`: a `Say`, a `Call`, a string, or a list of them."""
    if isinstance(value, (Say, Call, str)):
        return True
    return isinstance(value, Sequence) and all(isinstance(v, (Say, Call, str)) for v in value)


def split_step(step: Step) -> tuple[str, list[Call]]:
    """Return a step's text (its `Say`s joined by spaces) and its calls, in order."""
    items: Sequence[Any] = [step] if isinstance(step, (Say, Call, str)) else step
    texts = [item.text if isinstance(item, Say) else item for item in items]
    said = " ".join(t for t in texts if isinstance(t, str) and t)
    return said, [item for item in items if isinstance(item, Call)]
