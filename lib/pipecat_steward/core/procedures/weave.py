"""Accept or refuse a woven prompt: markers only, the author's prose and blocks untouched.

A model asked to derive a procedure returns the author's whole prompt with ``{{#step id}}`` /
``{{/step}}`` (and ``{{#procedure name}}``) marker lines inserted. :func:`check_weave` decides
whether that answer may replace the prompt:

1. A group or step the author already named but the model renamed is put back under the
   author's name (markers are matched by their place in the prose, so a rename is told apart
   from a new block).
2. Stripping every structural marker from both texts must give byte-identical prose; the strip
   function doubles as the tamper check. Any other change is refused, with the first place the
   prose differs as the reason.
3. Every block the author wrote survives with the same body and group, the scanner reports no
   new problem, and a prompt without blocks gains at least one step.

A refusal carries a reason meant to be shown to the model on its one retry. Nothing is ever
salvaged by appending: the caller either gets the woven text or a reason.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pipecat_steward.core.procedures.blocks import (
    Marker,
    ScannedPrompt,
    scan,
    strip_markers,
    structural_markers,
)

__all__ = ["Rename", "WeaveAccepted", "WeaveRefused", "WeaveResult", "check_weave", "prose_drift"]

_SNIPPET = 120


@dataclass(frozen=True, slots=True)
class Rename:
    """A block the model renamed, put back: ``kind`` block ``proposed`` is ``original`` again."""

    kind: str
    proposed: str
    original: str


@dataclass(frozen=True, slots=True)
class WeaveAccepted:
    """The woven prompt (renames reconciled) and the step ids it adds."""

    prompt: str
    new_steps: tuple[str, ...]
    new_groups: tuple[str, ...]
    renamed: tuple[Rename, ...] = ()


@dataclass(frozen=True, slots=True)
class WeaveRefused:
    """Why the answer cannot replace the prompt (shown to the model on its retry)."""

    reason: str


WeaveResult = WeaveAccepted | WeaveRefused


def check_weave(original: str, woven: str) -> WeaveResult:
    """Accept ``woven`` as a marker-only edit of ``original``, or say why not.

    Args:
        original: The author's prompt as read (it may already contain blocks).
        woven: The model's answer: the whole prompt with markers inserted.

    Returns:
        :class:`WeaveAccepted` with the reconciled text, or :class:`WeaveRefused`.
    """
    woven, renamed = reconcile_names(original, woven)
    drift = prose_drift(strip_markers(original), strip_markers(woven))
    if drift is not None:
        return WeaveRefused(drift)
    before, after = scan(original), scan(woven)
    problem = _new_warning(before, after) or _lost_block(before, after)
    if problem is not None:
        return WeaveRefused(problem)
    old_steps = {s.id for s in before.steps}
    new_steps = tuple(s.id for s in after.steps if s.id not in old_steps)
    if not before.has_blocks and not new_steps:
        return WeaveRefused("no {{#step id}} … {{/step}} markers were inserted")
    old_groups = {g.name for g in before.groups}
    new_groups = tuple(g.name for g in after.groups if g.name not in old_groups)
    return WeaveAccepted(woven, new_steps, new_groups, renamed)


def prose_drift(expected: str, got: str) -> str | None:
    """Describe the first place ``got`` differs from ``expected`` (``None`` when identical)."""
    if expected == got:
        return None
    want, have = expected.splitlines(keepends=True), got.splitlines(keepends=True)
    for number, (a, b) in enumerate(zip(want, have, strict=False), start=1):
        if a != b:
            return (
                f"the prose changed at line {number} (markers not counted): expected "
                f"{_cut(a)}, got {_cut(b)}; copy every line exactly and only insert marker lines"
            )
    if len(want) > len(have):
        return (
            f"the prose is missing its line {len(have) + 1} onwards, starting {_cut(want[len(have)])}"
            "; return the whole prompt"
        )
    return f"text was added after the prompt's last line: {_cut(have[len(want)])}; add nothing"


def reconcile_names(original: str, woven: str) -> tuple[str, tuple[Rename, ...]]:
    """Give each of the author's blocks that the model renamed its author's name back.

    An author's opener and a woven opener are the same block when they are the n-th opener of
    that kind at the same place in the prose.
    """
    authored = _by_place(structural_markers(original))
    edits: list[tuple[Marker, str]] = []
    seen: Counter[tuple[str, int]] = Counter()
    for marker in structural_markers(woven):
        if marker.action != "open":
            continue
        key = (marker.kind, marker.offset)
        author = authored.get((*key, seen[key]))
        seen[key] += 1
        if author is not None and author.name != marker.name:
            edits.append((marker, author.name))
    text = woven
    for marker, name in reversed(edits):
        span = text[marker.start : marker.end]
        at = span.index(marker.name, span.index("#" + marker.kind) + len(marker.kind) + 1)
        span = span[:at] + name + span[at + len(marker.name) :]
        text = text[: marker.start] + span + text[marker.end :]
    renames = tuple(Rename(m.kind, m.name, name) for m, name in edits)
    return text, renames


def _by_place(markers: tuple[Marker, ...]) -> dict[tuple[str, int, int], Marker]:
    """Index openers by (kind, prose offset, n-th at that offset)."""
    out: dict[tuple[str, int, int], Marker] = {}
    seen: Counter[tuple[str, int]] = Counter()
    for marker in markers:
        if marker.action == "open":
            key = (marker.kind, marker.offset)
            out[(*key, seen[key])] = marker
            seen[key] += 1
    return out


def _new_warning(before: ScannedPrompt, after: ScannedPrompt) -> str | None:
    """The first scanner problem the woven text has and the original did not."""
    known = Counter((w.code, w.subject) for w in before.warnings)
    for warning in after.warnings:
        key = (warning.code, warning.subject)
        if known[key]:
            known[key] -= 1
            continue
        return f"the markers are malformed: {warning.message} ({warning.code})"
    return None


def _lost_block(before: ScannedPrompt, after: ScannedPrompt) -> str | None:
    """The first of the author's blocks the woven text removed, moved or changed."""
    steps = {s.id: s for s in after.steps}
    for old in before.steps:
        new = steps.get(old.id)
        if new is None:
            return f"the author's step {old.id!r} is gone; keep every existing block as it is"
        if new.nodes != old.nodes:
            return f"the author's step {old.id!r} changed its body; keep its markers where they are"
        if new.group != old.group:
            return f"the author's step {old.id!r} moved to another group; leave it where it is"
    groups = {g.name: g for g in after.groups}
    for group in before.groups:
        kept = groups.get(group.name)
        if kept is None:
            return f"the author's group {group.name!r} is gone; keep every existing block"
        if not set(group.step_ids) <= set(kept.step_ids):
            return f"the author's group {group.name!r} lost steps; leave its steps inside it"
    return None


def _cut(line: str) -> str:
    """Quote a line for a reason, shortened."""
    text = line if len(line) <= _SNIPPET else line[:_SNIPPET] + "…"
    return repr(text)
