"""Route a tool call the LLM made into the engine's state.

This is the tool wrapper's logic, free of Pipecat so the simulator, the replay and the Pipecat
seam share it.

The agent's setter functions are plain validators (pure): they take the tool's arguments
and return ``{"stored": True, "value": …}`` or ``{"error": True, "error_code": …}``. A setter the
agent did not write gets a pass-through validator.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from pipecat_steward.core.slots import (
    CompiledFlow,
    Routed,
    confirm_pending,
    correct_slot,
    decline_slot,
    reject_pending,
    route_setter,
)
from pipecat_steward.core.slots.visibility import visible_tools
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.arguments import ToolParams, argument_problem

__all__ = ["ToolFn", "awaited_call", "contained", "dispatch", "run_validator"]

ToolFn = Callable[..., Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
"""An agent function: a setter's validator (called directly; anything but a mapping is answered
as ``bad_result``) or a task's executor (a plain function runs in a thread, a coroutine function
is awaited)."""
_log = logging.getLogger(__name__)
_CORRECT = ToolParams({"slot": {"type": "string"}, "value": {"type": "string"}}, ("slot", "value"))


def awaited_call(fn: ToolFn, args: Mapping[str, Any]) -> Awaitable[Any]:
    """A call of an agent function the runtime awaits (anything but a setter's validator).

    A coroutine function runs on the loop; a plain function runs in a thread, so a blocking
    backend never stalls the call's audio.
    """
    return fn(**args) if inspect.iscoroutinefunction(fn) else asyncio.to_thread(fn, **args)  # pyright: ignore[reportReturnType]


def run_validator(
    flow: CompiledFlow, tools: Mapping[str, ToolFn], setter: str, args: Mapping[str, Any]
) -> Mapping[str, Any]:
    """Call the agent's validator for ``setter`` (or the pass-through one)."""
    fn = tools.get(setter)
    if fn is not None:
        return contained(setter, lambda: fn(**args))
    members = flow.setters[setter]
    if len(members) == 1 and members[0][0] is None:
        return {"stored": True, "value": next(iter(args.values()), None)}
    return {"stored": True, "values": {k: v for k, v in args.items() if v is not None}}


def contained(tool: str, run: Callable[[], Any]) -> Mapping[str, Any]:
    """Run user code for ``tool``; an exception or a result that is not a mapping is contained.

    The traceback goes to the log; the caller gets an error result (``tool_exception`` with the
    exception's type, or ``bad_result``) that routes like any validator error.
    """
    try:
        result = run()
    except Exception as exc:
        _log.exception("tool %s raised; the call is answered with an error", tool)
        return {"error": True, "error_code": "tool_exception", "exception": type(exc).__name__}
    if not isinstance(result, Mapping):
        _log.error("tool %s returned %s, not a mapping", tool, type(result).__name__)
        return {"error": True, "error_code": "bad_result", "tool": tool}
    return cast(Mapping[str, Any], result)


def dispatch(
    flow: CompiledFlow,
    state: SessionState,
    tools: Mapping[str, ToolFn],
    name: str,
    args: Mapping[str, Any],
    *,
    user_text: str = "",
    check_visible: bool = True,
    bot_text: str = "",
) -> Routed:
    """Run a steward-managed tool call and route its result into state.

    Returns a refusal (``ok=False``, ``error_code='not_available'``) for a tool that is not
    visible now, as a real model could never have called it. ``user_text`` is the caller's
    words this turn and ``bot_text`` what the bot said last: a correction needs them.
    """
    if check_visible and name not in visible_tools(flow, state, fresh_pending=False):
        return Routed(state, False, {"error": True, "error_code": "not_available"})
    if name == "confirm_pending":
        return confirm_pending(flow, state)
    if name == "reject_pending":
        return reject_pending(flow, state)
    if name == "decline_slot":
        return decline_slot(flow, state, str(args.get("slot", "")), user_text)
    if name == "correct_slot":
        return _correct(flow, state, tools, args, (user_text, bot_text))
    if name in flow.setters:
        return route_setter(flow, state, name, run_validator(flow, tools, name, args), user_text)
    return Routed(state, False, {"error": True, "error_code": "unknown_tool"})


def _correct(
    flow: CompiledFlow,
    state: SessionState,
    tools: Mapping[str, ToolFn],
    args: Mapping[str, Any],
    words: tuple[str, str],
) -> Routed:
    name = str(args.get("slot", ""))
    slot = flow.slot.get(name)
    if slot is None or not slot.config.setter:
        return Routed(state, False, {"error": True, "error_code": "unknown_slot"})
    if args.get("value") is None:  # never the validator's: it could store the text "None"
        return Routed(state, False, argument_problem("correct_slot", _CORRECT, args) or {})
    field = slot.config.setter_field
    call_args = {field: args.get("value")} if field else {"value": args.get("value")}
    if tools.get(slot.config.setter) is not None and not field:
        call_args = _single_arg(tools[slot.config.setter], args.get("value"))
    result = dict(run_validator(flow, tools, slot.config.setter, call_args))
    if field and "values" in result:
        values = result.get("values") or {}
        result = (
            {"stored": True, "value": values.get(field)}
            if field in values
            else {
                "error": True,
                "error_code": str((result.get("field_errors") or {}).get(field, "invalid")),
            }
        )
    return correct_slot(flow, state, name, result, *words)


def _single_arg(fn: ToolFn, value: Any) -> dict[str, Any]:
    code = getattr(fn, "__code__", None)
    names = code.co_varnames[: code.co_argcount] if code is not None else ()
    return {names[0]: value} if names else {"value": value}
