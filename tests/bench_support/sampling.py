"""Where a process's CPU time goes, by whose code runs: a sampling profiler for the benches.

A deterministic profiler (cProfile) adds the same cost to every call, so it shows code made of
many small calls as dearer than it is and code that does much per call as cheaper: under it the
steward's calls cost 1.06× plain pipecat's while their CPU time is 1.15–1.25×. A sample taken
every so much CPU time (``ITIMER_PROF``) costs the code nothing between samples, so the shares
it counts are the shares of CPU time.

Each sample goes to the first frame, from the innermost out, that is the code measured or not
library code (the standard library, a dataclass's generated ``__init__``, an installed package
such as pydantic, but not pipecat itself): the code that asked for that work. When that frame
is the code measured (``owned``), the sample is its own, and it is counted under the outermost
frame of that code on the stack: the entry point through which the rest of the process called
it (the hook, a bus callback, a tool handler).

Python runs a signal handler between two bytecodes of the main thread, so the time of a call
into C is counted at the Python frame that made it, and a sample never lands in another thread.
"""

from __future__ import annotations

import collections
import signal
import sysconfig
from collections.abc import Callable
from types import FrameType, TracebackType

__all__ = ["INTERVAL_S", "CpuSamples", "steward_code"]

INTERVAL_S = 0.0005
"""CPU time between two samples asked for; the kernel's timer tick may space them further
(4 ms at 250 Hz), which the sample counts show."""

_STDLIB = sysconfig.get_paths()["stdlib"]
_PACKAGE = "/pipecat_steward/"


def steward_code(filename: str) -> bool:
    """The steward's own code: its package, but not the fakes a bench runs as the pipeline."""
    return _PACKAGE in filename and f"{_PACKAGE}testing/" not in filename


def _neutral(filename: str) -> bool:
    """Library code, counted for whoever called it: the standard library, generated code
    (``<string>``), and every installed package but pipecat, the framework measured against."""
    if filename.startswith((_STDLIB, "<")):
        return True
    return "site-packages/" in filename and "site-packages/pipecat/" not in filename


class CpuSamples:
    """Count CPU-time samples while in a ``with`` block (the main thread, Unix only).

    Attributes:
        owned: Whether a file (a code object's ``co_filename``) is of the code measured.
        total: Samples taken.
        owned_samples: Samples of the code measured.
        entries: Those samples by entry point (``module:qualified name``).
    """

    def __init__(
        self, owned: Callable[[str], bool] = steward_code, interval_s: float = INTERVAL_S
    ) -> None:
        self.owned = owned
        self.interval_s = interval_s
        self.total = 0
        self.owned_samples = 0
        self.entries: collections.Counter[str] = collections.Counter()
        self._previous: object = None

    def __enter__(self) -> CpuSamples:
        self._previous = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval_s, self.interval_s)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        # A handler set outside Python reads as None and cannot be set again: the default.
        previous = signal.SIG_DFL if self._previous is None else self._previous
        signal.signal(signal.SIGPROF, previous)  # type: ignore[arg-type]

    def share(self) -> float:
        """The part of all samples that were the measured code's."""
        return self.owned_samples / self.total if self.total else 0.0

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        self.total += 1
        entry = self.entry(frame)
        if entry is not None:
            self.owned_samples += 1
            self.entries[entry] += 1

    def entry(self, frame: FrameType | None) -> str | None:
        """The entry point of the measured code a sample at ``frame`` is counted under, if any."""
        # The code measured first: installed as a package, it is not library code to itself.
        while frame is not None and not self.owned(frame.f_code.co_filename):
            if not _neutral(frame.f_code.co_filename):
                return None
            frame = frame.f_back
        if frame is None:
            return None
        outermost = frame
        while frame is not None:
            if self.owned(frame.f_code.co_filename):
                outermost = frame
            frame = frame.f_back
        module = outermost.f_globals.get("__name__", "?")
        return f"{module}:{outermost.f_code.co_qualname}"
