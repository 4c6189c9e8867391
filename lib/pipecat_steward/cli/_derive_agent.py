"""The agent folder as ``steward derive`` reads it, renders it back, and validates it.

What was read is kept byte for byte (:class:`Read`), so a write can be refused when the file
changed meanwhile. Rendering edits only the ``prompt`` and ``procedure`` sections of
``agent.yaml``; validation runs ``steward validate`` on a copy of the folder.
"""

from __future__ import annotations

import ast
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from pipecat_steward.cli._agent_yaml import append_steps, parses_to, replace_sections
from pipecat_steward.cli.validate import validate_agent
from pipecat_steward.core.procedures import scan
from pipecat_steward.core.procedures.derive import derive_request, merge_sidecar
from pipecat_steward.exceptions import ConfigError

__all__ = ["AgentFolder", "Read", "validation_errors"]


@dataclass(frozen=True)
class Read:
    """A file as read, to refuse the write if it changed meanwhile."""

    path: Path
    data: bytes


@dataclass(frozen=True)
class AgentFolder:
    """The agent folder as derive read it."""

    folder: Path
    path: Path
    text: str
    data: Mapping[str, Any]
    prompt: str
    sources: tuple[Read, ...]

    @classmethod
    def read(cls, folder: Path, prompt_file: Path | None) -> AgentFolder:
        path = folder / "agent.yaml"
        if not path.is_file():
            raise ConfigError(str(path), "not found; an agent folder needs agent.yaml")
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise ConfigError(str(path), f"not valid YAML: {err}") from None
        if not isinstance(data, dict):
            raise ConfigError(str(path), "expected a mapping at the top level")
        sources = [Read(path, raw)]
        if prompt_file is not None:
            prompt_raw = prompt_file.read_bytes()
            sources.append(Read(prompt_file, prompt_raw))
            prompt = prompt_raw.decode("utf-8")
        else:
            prompt = str(cast(dict[str, Any], data).get("prompt") or "")
        if not prompt.strip():
            raise ConfigError(f"{path}:prompt", "is empty; write the prompt or pass --prompt FILE")
        return cls(folder, path, text, cast(dict[str, Any], data), prompt, tuple(sources))

    @property
    def procedure(self) -> Mapping[str, Any] | None:
        raw = self.data.get("procedure")
        return cast(Mapping[str, Any], raw) if isinstance(raw, dict) else None

    @property
    def existing_ids(self) -> set[str]:
        """Step ids the author has: blocks in the prompt and sidecar entries."""
        return {s.id for s in scan(self.prompt).steps} | set(self.configured_ids)

    @property
    def configured_ids(self) -> list[str]:
        """Ids of ``procedure.steps`` entries, in the author's order."""
        steps = cast(list[Any], (self.procedure or {}).get("steps") or [])
        return [str(e.get("id")) for e in steps if isinstance(e, dict)]

    def request(self, refusal: str | None) -> str:
        scanned = scan(self.prompt)
        return derive_request(
            self.prompt,
            tools=_tools(self.data, self.folder / "tools.py"),
            variables=_variables(self.data),
            existing_steps=[s.id for s in scanned.steps],
            existing_groups=[g.name for g in scanned.groups],
            configured=self.configured_ids,
            refusal=refusal,
        )

    def render(self, prompt: str, entries: Sequence[Mapping[str, Any]]) -> str:
        """The ``agent.yaml`` text with ``prompt`` and the new sidecar entries, in one edit."""
        text = replace_sections(self.text, {"prompt": prompt})
        if not entries:
            return text
        expected = dict(cast(dict[str, Any], yaml.safe_load(text)))
        expected["procedure"] = merge_sidecar(self.procedure, entries)
        appended = append_steps(text, [dict(e) for e in entries])
        if appended is not None and parses_to(appended, expected):
            return appended
        return replace_sections(text, {"procedure": expected["procedure"]})


def validation_errors(agent: AgentFolder, text: str) -> set[str]:
    """The validation errors of the agent folder with ``agent.yaml`` replaced by ``text``."""
    with tempfile.TemporaryDirectory() as temp:
        copy = Path(temp) / agent.folder.name
        shutil.copytree(agent.folder, copy, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        (copy / "agent.yaml").write_text(text, encoding="utf-8")
        issues = validate_agent(copy)
    return {str(i) for i in issues if i.severity == "error"}


def _tools(data: Mapping[str, Any], tools_py: Path) -> list[str]:
    raw = data.get("tools")
    if isinstance(raw, list):
        return [str(t) for t in cast(list[object], raw)]
    if not tools_py.is_file():
        return []
    tree = ast.parse(tools_py.read_text(encoding="utf-8"), str(tools_py))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]


def _variables(data: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    raw = data.get("variables")
    rows = cast(list[Any], raw) if isinstance(raw, list) else []
    return [
        (str(v.get("name")), str(v.get("type", "string")), str(v.get("description", "")))
        for v in rows
        if isinstance(v, dict)
    ]
