"""The arguments each tool takes, and the check every tool entry makes before user code runs.

One description serves both the schema the model sees (``pipecat/tools.py``) and the check:
a setter's parameters come from the agent's validator signature (or from its slots when the
agent wrote none), an agent tool's from its signature, the steward's own tools are fixed. A
call with a name the tool does not take, or without one it needs, is answered with a tool
result that names what the tool expects, and never reaches the user's function.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pipecat_steward.core.slots import CompiledFlow
from pipecat_steward.core.slots.validate import STEWARD_TOOLS

__all__ = [
    "ToolArguments",
    "ToolParams",
    "argument_problem",
    "function_params",
    "setter_params",
    "steward_params",
]

_JSON_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string"}
_VAR_TYPES = {"integer": "integer", "number": "number", "boolean": "boolean", "list": "array"}


@dataclass(frozen=True, slots=True)
class ToolParams:
    """What a tool takes.

    Attributes:
        properties: Parameter name to its JSON-schema property.
        required: Parameters a call must give.
        open: The tool takes any further keyword (``**kwargs``): unknown names are allowed.
    """

    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...]
    open: bool = False


def function_params(fn: Callable[..., Any]) -> ToolParams:
    """The parameters of a plain Python function (keyword arguments; ``**kwargs`` opens it).

    Read once per function: every call of an agent shares its tools.
    """
    try:
        return _PARAMS[fn]
    except (KeyError, TypeError):
        pass
    params = _read_params(fn)
    with contextlib.suppress(TypeError):  # a callable that takes no weak reference
        _PARAMS[fn] = params
    return params


_PARAMS: weakref.WeakKeyDictionary[Callable[..., Any], ToolParams] = weakref.WeakKeyDictionary()


def _read_params(fn: Callable[..., Any]) -> ToolParams:
    props: dict[str, Mapping[str, Any]] = {}
    required: list[str] = []
    open_ = False
    for param in inspect.signature(fn).parameters.values():
        if param.kind is param.VAR_KEYWORD:
            open_ = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        props[param.name] = {"type": _json_type(param.annotation)}
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    return ToolParams(props, tuple(required), open_)


def setter_params(flow: CompiledFlow, name: str, fn: Callable[..., Any] | None) -> ToolParams:
    """A setter's parameters: its validator's, or one per slot it fills."""
    if fn is not None:
        return function_params(fn)
    members = flow.setters[name]
    multi = len(members) > 1 or any(field is not None for field, _ in members)
    props: dict[str, Mapping[str, Any]] = {}
    for field, slot_name in members:
        slot = flow.slot[slot_name]
        props[field or slot.name] = {
            "type": _VAR_TYPES.get(slot.config.type or "", "string"),
            "description": slot.config.hint or slot.label.replace("_", " "),
        }
    if multi:
        return ToolParams(props, ())
    # The pass-through validator of one slot stores the call's only value, whatever its name.
    return ToolParams(props, (), open=True)


def steward_params(flow: CompiledFlow) -> dict[str, ToolParams]:
    """The steward's own tools: ``confirm_pending``, ``reject_pending``, ``correct_slot``, ``decline_slot``."""
    slot = {"type": "string", "enum": list(flow.user_slots)}
    return {
        "confirm_pending": ToolParams({}, ()),
        "reject_pending": ToolParams({}, ()),
        "correct_slot": ToolParams({"slot": slot, "value": {"type": "string"}}, ("slot", "value")),
        "decline_slot": ToolParams({"slot": slot}, ("slot",)),
    }


def argument_problem(
    name: str, params: ToolParams, args: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The tool result for a call whose argument names do not fit ``params`` (None when they do).

    Only names are checked: values are the validator's to judge (it answers with its own
    error codes).
    """
    unexpected = [] if params.open else sorted(a for a in args if a not in params.properties)
    missing = [r for r in params.required if args.get(r) is None]
    if not (unexpected or missing):
        return None
    expected = ", ".join(
        f"{p} (required)" if p in params.required else p for p in params.properties
    )
    parts = [
        f"unknown argument(s) {', '.join(unexpected)}" if unexpected else "",
        f"missing {', '.join(missing)}" if missing else "",
    ]
    problem = "; ".join(p for p in parts if p)
    return {
        "error": True,
        "error_code": "bad_arguments",
        "unexpected": unexpected,
        "missing": missing,
        "expected": list(params.properties),
        "message": f"{name} was not run: {problem}. It takes: {expected or 'no arguments'}. "
        "Call it again with those names.",
    }


class ToolArguments:
    """The parameters of every tool one agent offers, derived once per name."""

    def __init__(self, flow: CompiledFlow, tools: Mapping[str, Callable[..., Any]]) -> None:
        self.flow = flow
        self.tools = tools
        self._params: dict[str, ToolParams] = {}

    def params(self, name: str) -> ToolParams | None:
        """What tool ``name`` takes (None for a name the agent does not know)."""
        if name not in self._params:
            if name in self.flow.setters:
                self._params[name] = setter_params(self.flow, name, self.tools.get(name))
            elif name in STEWARD_TOOLS:
                self._params[name] = steward_params(self.flow)[name]
            elif name in self.tools:
                self._params[name] = function_params(self.tools[name])
            else:
                return None
        return self._params[name]

    def problem(self, name: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
        """The informative tool result for arguments that do not fit ``name`` (None when they do)."""
        params = self.params(name)
        return argument_problem(name, params, args) if params is not None else None


def _json_type(annotation: Any) -> str:
    text = str(annotation)
    for py, json in _JSON_TYPES.items():
        if annotation is py or text.startswith(py.__name__):
            return json
    return "string"
