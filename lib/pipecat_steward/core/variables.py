"""Typed variable specs and coercion for the session blackboard.

Every value a condition, gate or checklist reads lives in the session's variables. A spec says
what type a variable holds and how it may be used: ``linked`` variables are written by the host
only, ``sensitive`` ones never leave the process in clear, ``description`` is what an extractor
is told about the variable.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator
from typing_extensions import TypeAliasType

from pipecat_steward.exceptions import CoercionError

__all__ = [
    "JsonValue",
    "Origin",
    "VariableChange",
    "VariableSpec",
    "VariableType",
    "coerce",
]

JsonValue = TypeAliasType(
    "JsonValue", "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
)
VariableType = Literal["string", "integer", "number", "boolean", "date", "time", "enum", "list"]
Origin = Literal["user", "extraction", "event", "task", "announce", "program"]

_TRUE = frozenset({"true", "yes", "y", "1", "on"})
_FALSE = frozenset({"false", "no", "n", "0", "off"})
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


class VariableSpec(BaseModel):
    """Declaration of one blackboard variable.

    Attributes:
        name: Variable name, as conditions refer to it.
        type: The declared type; writes are coerced to it.
        values: Allowed values of an ``enum`` variable.
        linked: Set by the host only; agents and models may not write it.
        sensitive: Never sent to a model and never logged in clear.
        description: What the variable means; required for extraction.
        extraction: Whether the per-turn extractor proposes values for it.
        digits: For a sensitive number (an SSN, an account number, a PIN): how many digits
            it has, so a caller saying one before its value is known is still redacted.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    type: VariableType = "string"
    values: tuple[str, ...] = ()
    linked: bool = False
    sensitive: bool = False
    description: str = ""
    extraction: bool = False
    digits: int | None = Field(default=None, ge=3, le=64)

    @model_validator(mode="after")
    def _check_enum(self) -> VariableSpec:
        if self.type == "enum" and not self.values:
            raise ValueError(f"enum variable {self.name!r} needs `values`; add the allowed values")
        if self.sensitive and self.extraction:
            raise ValueError(
                f"variable {self.name!r} is sensitive and has `extraction: true`, but a sensitive "
                "value is never sent to the extractor; remove `extraction` (or `sensitive`)"
            )
        return self


@dataclass(frozen=True, slots=True)
class VariableChange:
    """One write to the blackboard: ``variable_changed(name, old, new, origin)``."""

    name: str
    old: JsonValue
    new: JsonValue
    origin: Origin


def coerce(spec: VariableSpec, value: object) -> JsonValue:
    """Coerce ``value`` to the spec's type.

    Args:
        spec: The variable's declaration.
        value: The raw value (from a tool, a model or the host).

    Returns:
        The value in its canonical JSON-safe form (dates as ``YYYY-MM-DD``, times as ``HH:MM``).

    Raises:
        CoercionError: When the value cannot represent the declared type.
    """
    if value is None:
        return None
    try:
        return _COERCERS[spec.type](spec, value)
    except (ValueError, TypeError) as exc:
        raise CoercionError(
            f"variable {spec.name!r}: cannot read {value!r} as {spec.type}: {exc}"
        ) from exc


def _string(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, (dict, list)):
        raise TypeError("expected text, got a structure")
    return str(value).strip()


def _integer(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, bool):
        raise TypeError("a boolean is not a count")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("not a whole number")
    if isinstance(value, (int, float)):
        return int(value)
    return int(str(value).strip())


def _number(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    return float(str(value).strip().replace(",", ""))


def _boolean(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected yes/no")


def _date(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, _dt.date):
        return value.isoformat()
    return _dt.date.fromisoformat(str(value).strip()).isoformat()


def _time(_: VariableSpec, value: object) -> JsonValue:
    match = _TIME.match(str(value).strip())
    if not match:
        raise ValueError("expected HH:MM")
    hour, minute = int(match.group(1)), int(match.group(2))
    return _dt.time(hour, minute).strftime("%H:%M")


def _enum(spec: VariableSpec, value: object) -> JsonValue:
    text = str(value).strip()
    for allowed in spec.values:
        if allowed.lower() == text.lower():
            return allowed
    raise ValueError(f"not one of {', '.join(spec.values)}")


def _list(_: VariableSpec, value: object) -> JsonValue:
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in cast("list[object]", value)]
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    raise TypeError("expected a list")


_COERCERS: Mapping[VariableType, Callable[[VariableSpec, object], JsonValue]] = {
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "date": _date,
    "time": _time,
    "enum": _enum,
    "list": _list,
}


def _json(value: object) -> JsonValue:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
