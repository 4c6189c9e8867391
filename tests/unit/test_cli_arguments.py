"""Numeric command-line options refuse what they cannot mean, as they are parsed.

A count of turns of 0, a port of -1 or a timeout of -3 seconds used to be taken, and the
command then stopped on a division by zero, ran nothing, or waited forever. Every numeric
option of ``steward`` is declared with a type of ``pipecat_steward.cli.arguments``, which
argparse reports like its own errors: the usage, the option and the reason, exit 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pipecat_steward.cli import arguments
from pipecat_steward.cli.arguments import PORT, seconds, whole_number, whole_numbers
from pipecat_steward.cli.main import build_parser, main

TYPES: dict[str, Callable[[str], Any]] = {
    "count": whole_number(1),
    "zero or more": whole_number(0),
    "counts": whole_numbers(1),
    "seconds": seconds(),
    "seconds or none": seconds(zero=True),
    "port": PORT,
}

GOOD = [
    ("count", "1", 1),
    ("count", " 12 ", 12),
    ("zero or more", "0", 0),
    ("counts", "1,10,50", [1, 10, 50]),
    ("counts", "7", [7]),
    ("counts", "1, 2", [1, 2]),
    ("seconds", "0.5", 0.5),
    ("seconds", "180", 180.0),
    ("seconds or none", "0", 0.0),
    ("port", "1", 1),
    ("port", "65535", 65535),
]

BAD = [
    ("count", "0", "at least 1, not 0"),
    ("count", "-3", "at least 1, not -3"),
    ("count", "abc", "'abc' is not a whole number"),
    ("count", "1.5", "not a whole number"),
    ("count", "", "not a whole number"),
    ("zero or more", "-1", "at least 0, not -1"),
    ("counts", "1,0,5", "at least 1, not 0"),
    ("counts", "1,,5", "not a comma-separated list"),
    ("counts", "", "not a comma-separated list"),
    ("counts", "10,x", "'x' is not a whole number"),
    ("seconds", "0", "more than 0 seconds, not 0"),
    ("seconds", "-1", "more than 0 seconds"),
    ("seconds", "nan", "more than 0 seconds"),
    ("seconds", "inf", "more than 0 seconds"),
    ("seconds", "soon", "'soon' is not a number of seconds"),
    ("seconds or none", "-0.1", "0 or more seconds"),
    ("port", "0", "from 1 to 65535, not 0"),
    ("port", "70000", "from 1 to 65535, not 70000"),
]


@pytest.mark.parametrize(("kind", "text", "value"), GOOD)
def test_a_value_the_option_can_mean_is_taken(kind: str, text: str, value: object) -> None:
    assert TYPES[kind](text) == value


@pytest.mark.parametrize(("kind", "text", "reason"), BAD)
def test_a_value_the_option_cannot_mean_is_refused_with_the_reason(
    kind: str, text: str, reason: str
) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=reason):
        TYPES[kind](text)


def _numeric_options() -> Iterator[tuple[str, argparse.Action]]:
    """Every option of every ``steward`` subcommand whose value is a number."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # pyright: ignore[reportPrivateUsage]
    for name, command in sub.choices.items():
        for action in command._actions:  # pyright: ignore[reportPrivateUsage]
            if action.type in (int, float) or _ours(action.type):
                yield name, action


def _ours(kind: object) -> bool:
    return getattr(kind, "__module__", None) == arguments.__name__


def test_every_numeric_option_of_steward_is_bounded() -> None:
    found = list(_numeric_options())
    assert {(name, a.option_strings[0]) for name, a in found} >= {
        ("forecast", "--turns"),
        ("derive", "--timeout"),
        ("rehearse", "--port"),
        ("studio", "--turn-timeout"),
    }
    loose = [f"steward {name} {a.option_strings[0]}" for name, a in found if not _ours(a.type)]
    assert not loose, f"declare these with pipecat_steward.cli.arguments: {loose}"


@pytest.mark.parametrize("value", ["-1", "0", "x"])
def test_steward_refuses_a_bad_number_before_doing_anything(
    value: str, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    for name, action in _numeric_options():
        option = action.option_strings[0]
        if value == "0" and action.type is not None and _accepts(action.type, "0"):
            continue
        with pytest.raises(SystemExit) as stopped:
            main([name, str(tmp_path), option, value])
        assert stopped.value.code == 2, f"steward {name} {option} {value}"
        err = capsys.readouterr().err
        assert f"argument {option}" in err and "Traceback" not in err, err


def _accepts(kind: Callable[[str], Any], text: str) -> bool:
    try:
        kind(text)
    except argparse.ArgumentTypeError:
        return False
    return True
