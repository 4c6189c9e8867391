"""The options a host gives a session (and a steward), checked when it is made.

A value an option cannot take would otherwise surface mid-call: ``task_timeout_s="5"`` when the
first task runs, ``on_handover=3`` at the first hand-over; ``state={}`` would be replaced by a
fresh state without a word, and ``client_messages="no"`` would read as yes. So every option is
checked as the session (or the steward) is made, and every problem is named in one
``ConfigError`` with what the option takes. Each way in checks what it is given (``Steward``
its own options with the session's, ``open_session`` the engine's, the session its own), so
each reports every problem at once; a check costs microseconds, once per call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.caller_turns import CallerTurns
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.oversight import Oversight

__all__ = [
    "SESSION_OPTIONS",
    "Check",
    "check_options",
    "check_session_options",
    "instance",
    "is_seconds",
]


@dataclass(frozen=True, slots=True)
class Check:
    """What one option takes.

    Attributes:
        test: True for a value the option takes.
        takes: What it takes, in words, for the error.
        none: None is taken too (the option's default).
    """

    test: Callable[[Any], bool]
    takes: str
    none: bool = True


def is_seconds(value: object, *, zero: bool = False) -> bool:
    """Whether ``value`` is a number of seconds: finite and more than 0 (or 0 too, ``zero``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and (value > 0 or (zero and value == 0))


def _random_source(value: Any) -> bool:
    return callable(getattr(value, "choice", None))


def instance(kind: type | tuple[type, ...], takes: str, *, none: bool = True) -> Check:
    """The check of an option that takes an instance of ``kind``."""
    return Check(lambda v: isinstance(v, kind), takes, none)


SESSION_OPTIONS: dict[str, Check] = {
    "state": instance(SessionState, "a SessionState (e.g. a restored one)"),
    "rng": Check(_random_source, "a random source with choice(), e.g. random.Random(0)"),
    "event_data": instance(Mapping, "a mapping of event data by name"),
    "channel": instance(str, "a channel name (text)"),
    "judge": Check(callable, "an async callable that judges a gated step"),
    "gate_timeout_s": Check(is_seconds, "a number of seconds, more than 0"),
    "task_timeout_s": Check(is_seconds, "a number of seconds, more than 0"),
    "on_handover": Check(callable, "a callable taking a Handover (sync or async)"),
    "client_messages": instance(bool, "True or False", none=False),
    "checkpointer": instance(Checkpointer, "a Checkpointer (a store and the call's identity)"),
    "caller_turns": instance(CallerTurns, "the CallerTurns the relay shares"),
    "oversight": instance(Oversight, "an Oversight"),
    "clock": Check(callable, "a callable giving today's date (ISO text)"),
    "call_id": instance(str, "the call's id (text)"),
}
"""Each session option's check."""


def check_session_options(options: Mapping[str, Any]) -> None:
    """Raise ``ConfigError`` naming every session option, of ``options``, it cannot take."""
    check_options(options, SESSION_OPTIONS)


def check_options(options: Mapping[str, Any], checks: Mapping[str, Check]) -> None:
    """Raise ``ConfigError`` naming every option of ``options`` that fails its check."""
    problems = [p for name, value in options.items() if (p := _problem(name, value, checks))]
    if problems:
        raise ConfigError("options", "; ".join(problems))


def _problem(name: str, value: Any, checks: Mapping[str, Check]) -> str | None:
    """What is wrong with ``name=value`` (None: nothing)."""
    check = checks.get(name)
    if check is None:
        return f"{name}: no such option; the options are {', '.join(sorted(checks))}"
    if (value is None and check.none) or check.test(value):
        return None
    return f"{name}: takes {check.takes}, not {_shown(value)}"


def _shown(value: Any) -> str:
    text = repr(value)
    kind = type(value).__name__
    return f"{text[:60]}… ({kind})" if len(text) > 60 else f"{text} ({kind})"
