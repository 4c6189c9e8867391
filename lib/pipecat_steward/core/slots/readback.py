"""Readback formatting (a slot's ``readback_fmt``) and ``{slot}`` substitution.

Formats are data: a built-in name (``date``, ``time``), a dict spec (``plural``, ``prefix``,
``none_sub``) or a ``{value}`` format string. Lambda strings are rejected at load: nothing is
ever executed.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping

from pipecat_steward.core.slots.config import ReadbackSpec
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import ConfigError

__all__ = ["Formatter", "compile_format", "render", "render_parts"]

Formatter = Callable[[JsonValue], str]
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def render(template: str, values: Mapping[str, JsonValue]) -> str:
    """Replace ``{name}`` with ``values[name]``; unknown placeholders stay as written."""
    if "{" not in template:
        return template

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return _text(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(one, template)


def render_parts(value: JsonValue, values: Mapping[str, JsonValue]) -> JsonValue:
    """Apply ``render`` recursively to every string inside a response part."""
    if isinstance(value, str):
        return render(value, values)
    if isinstance(value, list):
        return [render_parts(v, values) for v in value]
    if isinstance(value, dict):
        return {k: render_parts(v, values) for k, v in value.items()}
    return value


def compile_format(spec: str | ReadbackSpec | None, path: str) -> Formatter:
    """Compile a ``readback_fmt`` once at load.

    Raises:
        ConfigError: For a lambda string or an unknown built-in name.
    """
    if spec is None:
        return _text
    if isinstance(spec, ReadbackSpec):
        return _DICT_FORMATS[spec.type](spec)
    if spec.strip().startswith("lambda"):
        raise ConfigError(
            path,
            "lambda readback formats are not executed; use a format string like '{value} guests'",
        )
    if spec in _BUILTINS:
        return _BUILTINS[spec]
    if "{value}" in spec:
        return lambda value: spec.replace("{value}", _text(value))
    raise ConfigError(
        path, f"unknown readback format {spec!r}; use date, time, a dict spec or '{{value}}'"
    )


def _text(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def format_date(value: JsonValue) -> str:
    """``2026-07-15`` → ``July 15th`` (text that is not a date is returned as is)."""
    try:
        day = _dt.date.fromisoformat(str(value))
    except ValueError:
        return _text(value)
    return f"{_MONTHS[day.month - 1]} {_ordinal(day.day)}"


def format_time(value: JsonValue) -> str:
    """``19:30`` → ``7:30 PM``; ``20:00`` → ``8 PM`` (other text is returned as is)."""
    match = re.match(r"^(\d{1,2}):(\d{2})", str(value))
    if not match:
        return _text(value)
    hour, minute = int(match.group(1)), int(match.group(2))
    clock = hour % 12 or 12
    half = "AM" if hour < 12 else "PM"
    return f"{clock} {half}" if minute == 0 else f"{clock}:{minute:02d} {half}"


def _plural(spec: ReadbackSpec) -> Formatter:
    def fmt(value: JsonValue) -> str:
        noun = spec.one if str(value).strip() in ("1", "1.0") else spec.other
        return f"{_text(value)} {noun}".strip()

    return fmt


def _prefix(spec: ReadbackSpec) -> Formatter:
    return lambda value: f"{spec.text}{_text(value)}"


def _none_sub(spec: ReadbackSpec) -> Formatter:
    nones = frozenset(v.lower() for v in spec.none_values)
    return lambda value: spec.text if _text(value).strip().lower() in nones else _text(value)


_BUILTINS: Mapping[str, Formatter] = {"date": format_date, "time": format_time}
_DICT_FORMATS: Mapping[str, Callable[[ReadbackSpec], Formatter]] = {
    "plural": _plural,
    "prefix": _prefix,
    "none_sub": _none_sub,
}
