"""A scenario's scripted backend: canned results, failures and slow answers in place of tools.

A scenario's ``backend:`` maps a tool name to the answers of its calls, in order (the last one
repeats). An answer is a result mapping, returned as the tool would return it, or a scripted
behaviour, a mapping of only these keys:

- ``raise: ConnectionError`` (or ``"ConnectionError: upstream down"``): the call raises that
  built-in exception; any other text raises ``RuntimeError`` with it as the message;
- ``timeout: true``: the call raises ``TimeoutError``, as a client does when the backend does
  not answer in time;
- ``hang: true``: the call never answers (the task's deadline has to end it);
- ``delay_s: 0.2``: the call answers only after that many seconds (with ``result:``, or the
  failure above);
- ``result: {...}``: the result returned after the delay.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.runtime.dispatch import ToolFn

__all__ = ["BEHAVIOUR_KEYS", "scripted_backend"]

BEHAVIOUR_KEYS = frozenset({"raise", "timeout", "hang", "delay_s", "result"})
_TRIGGERS = ("raise", "timeout", "hang", "delay_s")


def scripted_backend(agent: Agent, scripted: Mapping[str, list[dict[str, Any]]]) -> Agent:
    """The agent with the scenario's scripted backend answers in place of its tools.

    Each stand-in takes what the real tool takes. A setter's validator, which the runtime
    calls directly, is stood in for by a plain function; every other tool (an executor, a
    transaction's check, the model's tool) by a coroutine function, as a non-blocking backend
    client is: the runtime runs a plain function in a thread (so a blocking one never stalls
    the call), a hop a canned answer does not need.
    """
    tools: dict[str, ToolFn] = dict(agent.tools)
    for name, answers in scripted.items():
        replay = _replayer(name, list(answers))
        stand_in = replay if name in agent.validators else _awaiting(replay)
        like = agent.tools.get(name)
        # The stand-in takes what the real tool takes, so its calls are checked alike.
        tools[name] = functools.update_wrapper(stand_in, like) if like is not None else stand_in
    return dataclasses.replace(agent, tools=tools)


def _replayer(name: str, answers: list[dict[str, Any]]) -> Callable[..., Any]:
    def tool(**_: Any) -> Any:
        if not answers:
            raise RuntimeError(f"scenario backend for {name!r} has no more results")
        answer = answers.pop(0) if len(answers) > 1 else dict(answers[0])
        return _behave(answer) if is_behaviour(answer) else answer

    return tool


def _awaiting(replay: Callable[..., Any]) -> Callable[..., Any]:
    """``replay`` as a coroutine function (a behaviour's awaitable is awaited in it)."""

    async def tool(**args: Any) -> Any:
        answer = replay(**args)
        return await answer if inspect.isawaitable(answer) else answer

    return tool


def is_behaviour(answer: Mapping[str, Any]) -> bool:
    """Whether a scripted answer is a behaviour (raise, time out, delay) rather than a result."""
    return set(answer) <= BEHAVIOUR_KEYS and any(k in answer for k in _TRIGGERS)


def _behave(answer: Mapping[str, Any]) -> Any:
    """Answer now, or (with a delay, or never) return the awaitable the session awaits."""
    if answer.get("hang"):
        return asyncio.Event().wait()
    if float(answer.get("delay_s", 0) or 0) > 0:
        return _later(answer)
    return _now(answer)


async def _later(answer: Mapping[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(float(answer["delay_s"]))
    return _now(answer)


def _now(answer: Mapping[str, Any]) -> dict[str, Any]:
    if answer.get("timeout"):
        raise TimeoutError("scripted backend timed out")
    if "raise" in answer:
        raise _exception(str(answer["raise"]))
    return dict(answer.get("result") or {})


def _exception(spec: str) -> Exception:
    """``ConnectionError`` / ``ConnectionError: message`` → that built-in; else RuntimeError."""
    kind, _, message = spec.partition(":")
    cls = getattr(builtins, kind.strip(), None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(message.strip() or f"scripted {kind.strip()}")
    return RuntimeError(spec)
