"""The options a host gives a session, checked when the session is made.

``Steward(agent, task_timeout_s="5")`` or ``on_handover=my_dict`` used to be taken and to fail
mid-call, when the first task ran or the first hand-over came; ``state={}`` was quietly
replaced by a fresh state, and ``client_messages="no"`` read as yes. Every option is checked
as the session is made, and every problem is named in one error with what the option takes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pipecat_steward.core.state import SessionState
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.runtime.caller_turns import CallerTurns
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.oversight import Oversight

__all__ = ["check_session_options"]

Check = tuple[Callable[[Any], bool], str]


def _seconds(value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def _random_source(value: Any) -> bool:
    return callable(getattr(value, "choice", None))


def _instance(kind: type, takes: str) -> Check:
    return (lambda v: isinstance(v, kind), takes)


# Each option's test and what it takes; None (the default) is taken but for client_messages.
_CHECKS: dict[str, Check] = {
    "state": _instance(SessionState, "a SessionState (e.g. a restored one)"),
    "rng": (_random_source, "a random source with choice(), e.g. random.Random(0)"),
    "event_data": (lambda v: isinstance(v, Mapping), "a mapping of event data by name"),
    "channel": (lambda v: isinstance(v, str), "a channel name (text)"),
    "judge": (callable, "an async callable that judges a gated step"),
    "gate_timeout_s": (_seconds, "a number of seconds, more than 0"),
    "task_timeout_s": (_seconds, "a number of seconds, more than 0"),
    "on_handover": (callable, "a callable taking a Handover (sync or async)"),
    "client_messages": _instance(bool, "True or False"),
    "checkpointer": _instance(Checkpointer, "a Checkpointer (a store and the call's identity)"),
    "caller_turns": _instance(CallerTurns, "the CallerTurns the relay shares"),
    "oversight": _instance(Oversight, "an Oversight"),
}


def check_session_options(options: Mapping[str, Any]) -> None:
    """Raise ``ConfigError`` naming every option, of ``options`` by name, it cannot take."""
    problems = [
        f"{name}: takes {takes}, not {_shown(value)}"
        for name, value in options.items()
        if (takes := _refused(name, value)) is not None
    ]
    if problems:
        raise ConfigError("session options", "; ".join(problems))


def _refused(name: str, value: Any) -> str | None:
    """What ``name`` takes, when ``value`` is not that (None when it is)."""
    if value is None and name != "client_messages":
        return None
    test, takes = _CHECKS[name]
    return None if test(value) else takes


def _shown(value: Any) -> str:
    text = repr(value)
    return (
        f"{text[:60]}… ({type(value).__name__})"
        if len(text) > 60
        else f"{text} ({type(value).__name__})"
    )
