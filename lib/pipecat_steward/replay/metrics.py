"""Counters of an SGD replay and the report they make.

The ratios (definitions in ``docs/sgd.md``):

- ``joint_state_accuracy``: user-turn frames with an active intent whose engine state (every
  settled slot of the service) equals the gold state, over all such frames;
- ``completion_agreement``: user-turn frames with an active intent where the engine's readiness
  of that intent's task (fired on the current inputs) equals the gold readiness (every required
  slot of the intent in the gold state), over all such frames;
- ``service_call_agreement``: gold service calls made right after a user turn at which the
  engine had fired that task on its current inputs, over all gold calls;
- ``call_argument_agreement``: gold service calls whose parameters equal the arguments of the
  engine's latest execution of that task (a slot the gold call omits must be at its default or
  ``dontcare``), over all gold calls;
- ``call_turn_agreement``: gold service calls made right after the very user turn at which the
  engine last executed that task, over all gold calls (a headline figure: it shows when the
  engine acts, where the others show what it knows).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["KEYS", "Metrics"]

KEYS = (
    "dialogues",
    "user_turns",
    "joint_state_accuracy",
    "completion_agreement",
    "service_call_agreement",
    "call_turn_agreement",
    "corrections",
    "seconds",
)
"""The keys the issue asks for, in print order (the report has a few more after them)."""


@dataclass
class Metrics:
    """Raw counts of one replay; ``report`` turns them into ratios."""

    dialogues: int = 0
    user_turns: int = 0
    state_frames: int = 0
    state_matches: int = 0
    completion_matches: int = 0
    calls: int = 0
    call_matches: int = 0
    argument_matches: int = 0
    call_turn_matches: int = 0
    corrections: int = 0
    intent_switches: int = 0
    rejected_calls: int = 0
    multi_valued: int = 0
    fresh_frames: int = 0
    seconds: float = 0.0
    parse_seconds: float = 0.0
    mismatches: Counter[str] = field(default_factory=lambda: Counter[str]())
    examples: dict[str, str] = field(default_factory=lambda: {})

    def miss(self, kind: str, dialogue_id: str) -> None:
        """Count one mismatch of class ``kind``; keep the first dialogue id as its example."""
        self.mismatches[kind] += 1
        self.examples.setdefault(kind, dialogue_id)

    def report(self) -> dict[str, Any]:
        """Return the JSON-safe report: the issue's keys first, then the extras."""
        return {
            "dialogues": self.dialogues,
            "user_turns": self.user_turns,
            "joint_state_accuracy": _ratio(self.state_matches, self.state_frames),
            "completion_agreement": _ratio(self.completion_matches, self.state_frames),
            "service_call_agreement": _ratio(self.call_matches, self.calls),
            "call_turn_agreement": _ratio(self.call_turn_matches, self.calls),
            "corrections": self.corrections,
            "seconds": round(self.seconds, 3),
            "call_argument_agreement": _ratio(self.argument_matches, self.calls),
            "active_intent_frames": self.state_frames,
            "service_calls": self.calls,
            "intent_switches": self.intent_switches,
            "rejected_calls": self.rejected_calls,
            "multi_valued_lists": self.multi_valued,
            "fresh_frames": self.fresh_frames,
            "user_turns_per_second": _rate(self.user_turns, self.seconds - self.parse_seconds),
            "parse_seconds": round(self.parse_seconds, 3),
            "replay_to_parse_ratio": round(
                (self.seconds - self.parse_seconds) / self.parse_seconds, 2
            )
            if self.parse_seconds
            else None,
            "mismatches": {
                kind: {"count": n, "example": self.examples[kind]}
                for kind, n in sorted(self.mismatches.items())
            },
        }


def _rate(count: int, seconds: float) -> float | None:
    return round(count / seconds, 1) if seconds > 0 else None


def _ratio(hits: int, total: int) -> float:
    return round(hits / total, 6) if total else 1.0
