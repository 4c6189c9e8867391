"""The promise watchdog: a promised tool action that never happens gets one nudge.

It arms when the agent promises a tool action ("I'll send the camera widget") while the
current step is a tool step — never on a question, which is the agent waiting for consent.
If no tool call or result and no caller speech arrive within 4 s (counted from the later of
the promise and the end of playout), :func:`fire` returns one nudge for that step; each step
is nudged at most once. Caller speech disarms it the moment the caller starts speaking.
Pure: times are parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pipecat_steward.core.monitor.ladder import Correction, correction_for
from pipecat_steward.core.monitor.policy import monitored, promises_action
from pipecat_steward.core.procedures.model import Severity
from pipecat_steward.core.procedures.state import ProcedureView

__all__ = ["PROMISE_WAIT_S", "Watchdog", "arm", "disarm", "fire", "played_out"]

PROMISE_WAIT_S = 4.0


@dataclass(frozen=True, slots=True)
class Watchdog:
    """The armed promise (if any) and the steps already nudged."""

    step: str | None = None
    deadline: float | None = None
    nudged: frozenset[str] = frozenset()

    @property
    def armed(self) -> bool:
        """Whether a promise is waiting for its action."""
        return self.deadline is not None


def arm(wd: Watchdog, view: ProcedureView, text: str, now: float) -> Watchdog:
    """Arm on a promise of a tool action spoken while the current step is a tool step."""
    step = view.current()
    if step is None or step.kind != "tool" or not monitored(view.procs, step):
        return wd
    if step.id in wd.nudged or not promises_action(text):
        return wd
    return replace(wd, step=step.id, deadline=now + PROMISE_WAIT_S)


def played_out(wd: Watchdog, now: float) -> Watchdog:
    """The bot stopped speaking: the 4 s count from the end of playout if that is later."""
    if wd.deadline is None:
        return wd
    return replace(wd, deadline=max(wd.deadline, now + PROMISE_WAIT_S))


def disarm(wd: Watchdog) -> Watchdog:
    """A tool call or result, or caller speech, arrived."""
    return replace(wd, step=None, deadline=None)


def fire(wd: Watchdog, view: ProcedureView, now: float) -> tuple[Watchdog, Correction | None]:
    """The nudge, once the deadline passed with the promised step still current."""
    if wd.deadline is None or wd.step is None or now < wd.deadline:
        return wd, None
    step, promised = view.current(), wd.step
    wd = replace(disarm(wd), nudged=wd.nudged | {promised})
    if step is None or step.id != promised:
        return wd, None
    return wd, correction_for(step, None, Severity.NUDGE, now, view.state.visit)
