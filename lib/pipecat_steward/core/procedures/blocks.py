"""The one inline-block scanner: ``{{#step}}``, ``{{#procedure}}``, references and pills.

Grammar (in an agent or topic prompt)::

    {{#procedure name}} … {{/procedure}}   a named group: its own checklist
    {{#step id}} … {{/step}}               a step; its body is its guidance, shipped in place
    {{PROCEDURE:name}}                     renders the group's numbered guidance (render-only)
    {{TOOL:x}}  {{COMPONENT:Name}}         pills; render as the bare name

Blocks are authoritative for step existence, order and guidance. Structural markers are
stripped before the prompt reaches the model (a marker alone on its line takes the line with
it). A step inside a step, or a group inside a group or a step, is ignored with a warning; an
unclosed block closes at the end of its container; a stray closer is dropped. An unknown
reference stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Marker",
    "Node",
    "Pill",
    "Ref",
    "ScanWarning",
    "ScannedGroup",
    "ScannedPrompt",
    "ScannedStep",
    "WarningCode",
    "render_nodes",
    "scan",
    "strip_markers",
    "structural_markers",
]

WarningCode = Literal[
    "unclosed_step",
    "unclosed_procedure",
    "stray_close",
    "nested_step",
    "nested_procedure",
    "bad_name",
    "duplicate_step",
    "duplicate_group",
    "unknown_reference",
]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_MARKER = re.compile(
    r"\{\{\s*(?:#(?P<open>step|procedure)\s+(?P<oname>[^}\s]*)\s*"
    r"|/(?P<close>step|procedure)\s*"
    r"|(?P<pill>PROCEDURE|TOOL|COMPONENT):(?P<pname>[^}\s]*)\s*)\}\}"
)
_VALID = re.compile(rf"^{_NAME}$")
_PILL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True, slots=True)
class ScanWarning:
    """A problem the scanner worked around; ``subject`` is the step or group name."""

    code: WarningCode
    subject: str
    message: str


@dataclass(frozen=True, slots=True)
class Pill:
    """A ``{{TOOL:x}}`` or ``{{COMPONENT:Name}}`` pill."""

    kind: Literal["TOOL", "COMPONENT"]
    name: str


@dataclass(frozen=True, slots=True)
class Ref:
    """A ``{{PROCEDURE:name}}`` reference; ``raw`` is the literal marker."""

    name: str
    raw: str


Node = str | Pill | Ref


@dataclass(frozen=True, slots=True)
class ScannedStep:
    """A step block: its id, group, body nodes and the pills it carries."""

    id: str
    group: str | None
    nodes: tuple[Node, ...]
    group_ordinal: int = -1  # which {{#procedure}} block of the prompt holds it (-1: none)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes if isinstance(n, Pill) and n.kind == "TOOL")

    @property
    def components(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.nodes if isinstance(n, Pill) and n.kind == "COMPONENT")


@dataclass(frozen=True, slots=True)
class ScannedGroup:
    """A ``{{#procedure name}}`` group defined in this prompt."""

    name: str
    step_ids: tuple[str, ...]
    ordinal: int = 0


@dataclass(frozen=True, slots=True)
class ScannedPrompt:
    """One prompt's scan: its body with markers removed, steps, groups, references."""

    nodes: tuple[Node, ...]
    steps: tuple[ScannedStep, ...]
    groups: tuple[ScannedGroup, ...]
    references: tuple[str, ...]
    warnings: tuple[ScanWarning, ...]
    has_blocks: bool


@dataclass(slots=True)
class _Frame:
    kind: Literal["root", "step", "procedure"]
    name: str
    group: str | None
    ignored: bool = False
    ordinal: int = -1
    nodes: list[Node] = field(default_factory=lambda: [])
    step_ids: list[str] = field(default_factory=lambda: [])


class _Scanner:
    def __init__(self) -> None:
        self.stack: list[_Frame] = [_Frame("root", "", None)]
        self.steps: list[ScannedStep] = []
        self.groups: list[ScannedGroup] = []
        self.refs: list[str] = []
        self.warnings: list[ScanWarning] = []
        self.blocks = False
        self.ordinals = -1

    def warn(self, code: WarningCode, subject: str, message: str) -> None:
        self.warnings.append(ScanWarning(code, subject, message))

    def text(self, value: str) -> None:
        if value:
            self.stack[-1].nodes.append(value)

    def marker(self, match: re.Match[str], raw: str) -> None:
        if match.group("open"):
            self.open(match.group("open"), match.group("oname"), raw)
        elif match.group("close"):
            self.close(match.group("close"))
        else:
            self.pill(match.group("pill"), match.group("pname"), raw)

    def open(self, kind: str, name: str, raw: str) -> None:
        if not _VALID.match(name):
            self.warn("bad_name", name, f"{raw} is not a valid {kind} name; left as text")
            self.text(raw)
            return
        self.blocks = True
        top = next(f for f in reversed(self.stack) if not f.ignored)
        kind_ = "step" if kind == "step" else "procedure"
        if top.kind != "root" and (kind_ == "procedure" or top.kind == "step"):
            code: WarningCode = "nested_step" if kind_ == "step" else "nested_procedure"
            self.warn(code, name, f"{{{{#{kind} {name}}}}} inside {top.kind} {top.name!r}: ignored")
            self.stack.append(_Frame(kind_, name, top.group, ignored=True))
            return
        if kind_ == "procedure":
            self.ordinals += 1
            self.stack.append(_Frame(kind_, name, name, ordinal=self.ordinals))
        else:
            self.stack.append(_Frame(kind_, name, top.group, ordinal=top.ordinal))

    def close(self, kind: str) -> None:
        depth = next(
            (i for i in range(len(self.stack) - 1, 0, -1) if self.stack[i].kind == kind), 0
        )
        if depth == 0:
            self.warn("stray_close", kind, f"{{{{/{kind}}}}} without an open block: dropped")
            return
        while len(self.stack) > depth + 1:
            self.finish(self.stack.pop(), unclosed=True)
        self.finish(self.stack.pop(), unclosed=False)

    def pill(self, kind: str, name: str, raw: str) -> None:
        if not _PILL_NAME.match(name):
            self.text(raw)
        elif kind == "PROCEDURE":
            self.refs.append(name)
            self.stack[-1].nodes.append(Ref(name, raw))
        else:
            self.stack[-1].nodes.append(Pill("TOOL" if kind == "TOOL" else "COMPONENT", name))

    def finish(self, frame: _Frame, *, unclosed: bool) -> None:
        if unclosed and not frame.ignored:
            code: WarningCode = "unclosed_step" if frame.kind == "step" else "unclosed_procedure"
            self.warn(code, frame.name, f"{frame.kind} {frame.name!r} is not closed")
        parent = self.stack[-1]
        parent.nodes.extend(frame.nodes)
        if frame.ignored:
            parent.step_ids.extend(frame.step_ids)
        elif frame.kind == "step":
            step = ScannedStep(frame.name, frame.group, tuple(frame.nodes), frame.ordinal)
            self.steps.append(step)
            parent.step_ids.append(frame.name)
        else:
            self.groups.append(ScannedGroup(frame.name, tuple(frame.step_ids), frame.ordinal))


def scan(prompt: str) -> ScannedPrompt:
    """Scan one prompt into nodes (markers removed), steps, groups and references."""
    scanner = _Scanner()
    pos = 0
    for match in _MARKER.finditer(prompt):
        start, end = _marker_span(prompt, match)
        if start < pos:
            start = pos
        scanner.text(prompt[pos:start])
        scanner.marker(match, match.group(0))
        pos = end
    scanner.text(prompt[pos:])
    while len(scanner.stack) > 1:
        scanner.finish(scanner.stack.pop(), unclosed=True)
    root = scanner.stack[0]
    return ScannedPrompt(
        tuple(root.nodes),
        tuple(scanner.steps),
        tuple(scanner.groups),
        tuple(scanner.refs),
        tuple(scanner.warnings),
        scanner.blocks,
    )


def _marker_span(text: str, match: re.Match[str]) -> tuple[int, int]:
    """A structural marker alone on its line takes the whole line, newline included."""
    start, end = match.span()
    if match.group("pill"):
        return start, end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() or text[end:line_end].strip():
        return start, end
    return line_start, min(line_end + 1, len(text))


def render_nodes(nodes: tuple[Node, ...], expand: Callable[[Ref], str]) -> str:
    """Render nodes to text: pills as their names, references through ``expand``."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, Pill):
            parts.append(node.name)
        else:
            parts.append(expand(node))
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Marker:
    """One structural marker with a valid name; ``text[start:end]`` is what stripping removes.

    ``offset`` is where the marker sits in the stripped prose, so markers of two texts that
    strip to the same prose can be matched by place.
    """

    action: Literal["open", "close"]
    kind: Literal["step", "procedure"]
    name: str  # "" for a closer
    start: int
    end: int
    offset: int


def structural_markers(prompt: str) -> tuple[Marker, ...]:
    """Every ``{{#step}}``/``{{#procedure}}`` opener (valid name) and closer, in order.

    Spans follow the scanner: a marker alone on its line takes the line with it. Openers with
    an invalid name are prose (the scanner leaves them as text); pills and references are prose.
    """
    found: list[Marker] = []
    pos = removed = 0
    for match in _MARKER.finditer(prompt):
        if match.group("pill") or (match.group("open") and not _VALID.match(match.group("oname"))):
            continue
        start, end = _marker_span(prompt, match)
        start = max(start, pos)
        action: Literal["open", "close"] = "open" if match.group("open") else "close"
        kind = "step" if (match.group("open") or match.group("close")) == "step" else "procedure"
        name = match.group("oname") if action == "open" else ""
        found.append(Marker(action, kind, name, start, end, start - removed))
        removed += end - start
        pos = end
    return tuple(found)


def strip_markers(prompt: str) -> str:
    """The prompt with every structural marker removed; all other text kept byte for byte."""
    parts: list[str] = []
    pos = 0
    for marker in structural_markers(prompt):
        parts.append(prompt[pos : marker.start])
        pos = marker.end
    parts.append(prompt[pos:])
    return "".join(parts)
