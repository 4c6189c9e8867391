"""Rewrite top-level sections of ``agent.yaml`` in place, keeping the rest of the file as written.

Only the sections being changed are re-rendered (the prompt as a literal block, other values
as block YAML); comments, key order and every other section stay byte for byte. The result
is parsed back and compared with what was meant; a mismatch raises instead of writing
something else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from pipecat_steward.exceptions import ConfigError

__all__ = ["append_steps", "parses_to", "render_literal", "replace_sections"]

_TOP_LEVEL = re.compile(r"^\S")


def replace_sections(text: str, values: Mapping[str, Any]) -> str:
    """Return ``text`` with each top-level key of ``values`` set to its value.

    A key the file lacks is appended. Raises :class:`ConfigError` when the edited file would
    not parse back to the original data with exactly these keys replaced.
    """
    expected = dict(yaml.safe_load(text) or {})
    out = text
    for key, value in values.items():
        if key in expected and expected[key] == value:
            continue  # unchanged: the author's layout stays
        block = render_literal(key, value) if isinstance(value, str) else _render(key, value)
        out = _replace(out, key, block)
        expected[key] = value
    if not parses_to(out, expected):
        raise ConfigError("agent.yaml", "could not rewrite the file faithfully; nothing written")
    return out


def render_literal(key: str, value: str) -> str:
    """Render ``key: |`` with ``value`` as a literal block (a quoted scalar when it must)."""
    if not value.strip() or "\r" in value or value.endswith("\n\n"):
        return _render(key, value)  # keep-chomping would swallow the blank lines that follow
    chomp = "" if value.endswith("\n") else "-"
    indent = "2" if value[0] in " \n" else ""
    body = "".join(f"  {line}" if line.strip() else line for line in value.splitlines(True))
    block = f"{key}: |{indent}{chomp}\n{body}" + ("" if body.endswith("\n") else "\n")
    return block if parses_to(block, {key: value}) else _render(key, value)


def parses_to(text: str, expected: object) -> bool:
    """Whether ``text`` is YAML that loads to ``expected`` (characters YAML cannot carry raw fail)."""
    try:
        return yaml.safe_load(text) == expected
    except yaml.YAMLError:
        return False


def _render(key: str, value: Any) -> str:
    """Render one top-level key in block style."""
    return yaml.safe_dump(
        {key: value}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100
    )


def _replace(text: str, key: str, block: str) -> str:
    """Swap the lines of top-level ``key`` (up to the next top-level line) for ``block``."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(rf"{re.escape(key)}\s*:", ln)), None)
    if start is None:
        sep = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return text + sep + block
    end = start + 1
    while end < len(lines) and not _TOP_LEVEL.match(lines[end]):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # blank lines before the next key stay where they are
    return "".join(lines[:start]) + block + "".join(lines[end:])


def append_steps(text: str, entries: list[dict[str, Any]]) -> str | None:
    """Append sidecar entries to ``procedure.steps`` written as a block list, in place.

    Returns ``None`` when the list is not a block list under a ``procedure:`` section (the
    caller then re-renders the section); the parse-back check is the caller's.
    """
    lines = text.splitlines(keepends=True)
    top = next((i for i, ln in enumerate(lines) if re.match(r"procedure\s*:\s*$", ln)), None)
    if top is None:
        return None
    at = next(
        (i for i in range(top + 1, len(lines)) if re.match(r"\s+steps\s*:\s*$", lines[i])), None
    )
    if at is None:
        return None
    key_indent = len(lines[at]) - len(lines[at].lstrip())
    first = next((i for i in range(at + 1, len(lines)) if lines[i].strip()), None)
    if first is None or not lines[first].lstrip().startswith("- "):
        return None
    dash = len(lines[first]) - len(lines[first].lstrip())
    if dash < key_indent:
        return None
    end = first + 1
    while end < len(lines) and _inside(lines[end], dash):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    rendered = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100)
    block = "".join(" " * dash + ln for ln in rendered.splitlines(keepends=True))
    tail = "" if lines[end - 1].endswith("\n") else "\n"
    return "".join(lines[:end]) + tail + block + "".join(lines[end:])


def _inside(line: str, dash: int) -> bool:
    """Whether ``line`` still belongs to a block list whose dashes sit at column ``dash``."""
    if not line.strip():
        return True
    indent = len(line) - len(line.lstrip())
    return indent > dash or (indent == dash and line.lstrip().startswith("- "))
