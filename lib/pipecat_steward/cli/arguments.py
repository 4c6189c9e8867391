"""Argument types for numeric command-line options: a bad value is refused as it is parsed.

``argparse``'s own ``type=int`` takes ``0`` and ``-5`` for a count of turns or a port, and the
command then stops on a division by zero, runs nothing, or waits forever. These types refuse
what the option cannot mean, and argparse reports it the usual way (usage, the option, exit 2)::

    parser.add_argument("--turns", type=whole_number(1), default=200)
    parser.add_argument("--n", type=whole_numbers(1), default="1,10,50")
    parser.add_argument("--timeout", type=seconds(), default=180.0)
    parser.add_argument("--port", type=PORT, default=7860)

Every numeric option of ``steward`` and of ``scripts/`` is declared with one of them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from pipecat_steward.runtime.options import is_seconds

__all__ = ["PORT", "seconds", "whole_number", "whole_numbers"]


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """The type of an option holding one whole number from ``minimum`` (to ``maximum``)."""
    bounds = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"must be a whole number {bounds}, not {value}")
        return value

    return parse


def whole_numbers(minimum: int) -> Callable[[str], list[int]]:
    """The type of an option holding comma-separated whole numbers, each from ``minimum``."""
    one = whole_number(minimum)

    def parse(text: str) -> list[int]:
        parts = [part.strip() for part in text.split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
        return [one(part) for part in parts]

    return parse


def seconds(*, zero: bool = False) -> Callable[[str], float]:
    """The type of an option holding a time in seconds: more than 0 (or 0 too, with ``zero``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not is_seconds(value, zero=zero):
            least = "0 or more" if zero else "more than 0"
            raise argparse.ArgumentTypeError(f"must be {least} seconds, not {text}")
        return value

    return parse


PORT = whole_number(1, 65535)
"""The type of a TCP port option."""
