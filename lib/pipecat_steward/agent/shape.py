"""Check the shape of every section of ``agent.yaml`` at once.

A section with a shape error is reported (every error in it, at its config path) and left at
its default, so the sections after it are still compiled and checked: one bad entry never
hides the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from pipecat_steward.agent.config import AgentConfig
from pipecat_steward.core.procedures import Issue

__all__ = ["config_path", "shape_issues"]

_BRANCH_TAGS = frozenset({"str", "int", "float", "bool", "none", "[key]"})
_KINDS = frozenset({"variable", "tool", "judge", "code", "llm"})
_TAGGED = frozenset({"complete_when", "applies_when"})
_MODEL_NAMES = frozenset(AgentConfig.model_json_schema().get("$defs", {}))


def shape_issues(data: Mapping[str, Any]) -> tuple[list[Issue], AgentConfig]:
    """Validate ``data`` section by section.

    Returns:
        Every shape error, and the config built from the sections without one.
    """
    try:
        return [], AgentConfig.model_validate(data)
    except ValidationError as exc:
        details = exc.errors()
    bad = {str(d["loc"][0]) for d in details if d["loc"]}
    good = {k: v for k, v in data.items() if isinstance(k, str) and k not in bad}
    return _issues(details), AgentConfig.model_validate(good)


def config_path(loc: tuple[int | str, ...]) -> str:
    """``('flow', 'slots', 0, 'setter')`` → ``flow.slots[0].setter``, union branch tags dropped."""
    out = ""
    previous: int | str = ""
    for part in loc:
        if _is_tag(part, previous):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        previous = part
    return out


def _is_tag(part: int | str, previous: int | str) -> bool:
    if isinstance(part, int):
        return False
    if previous in _TAGGED and part in _KINDS:
        return True
    return part in _BRANCH_TAGS or part in _MODEL_NAMES or "[" in part


def _issues(details: list[ErrorDetails]) -> list[Issue]:
    by_path: dict[str, list[str]] = {}
    for d in details:
        path = config_path(d["loc"]) or "agent.yaml"
        by_path.setdefault(path, []).append(_message(d))
    return [
        Issue("error", "invalid_config", path, " or ".join(dict.fromkeys(msgs)))
        for path, msgs in by_path.items()
    ]


def _message(d: ErrorDetails) -> str:
    msg = d["msg"].removeprefix("Value error, ")
    if d["type"] == "extra_forbidden":
        return "unknown key; remove it or check its spelling (see docs/agent-yaml.md)"
    if d["type"] == "missing":
        return "required key is missing"
    return _PLAIN.get(d["type"], msg)


_PLAIN = {
    "model_type": "expected a mapping of keys (see docs/agent-yaml.md)",
    "model_attributes_type": "expected a mapping of keys (see docs/agent-yaml.md)",
    "dict_type": "expected a mapping",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "string_type": "expected text",
}
