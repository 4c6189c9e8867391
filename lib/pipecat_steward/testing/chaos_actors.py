"""The chaos caller and the chaos model: seeded, adversarial, indifferent to the bot's wishes.

``ChaosCaller`` says things from a small grammar: plain and content-bearing affirmations,
values (numbers, dates, ids, names, unicode, emails, phones), corrections, refusals,
deflections, questions, off-topic talk, empty and whitespace turns and very long turns.

``ChaosModel`` is what a confused LLM does at each inference: it says random text (false
claims included), calls visible tools with valid, mistyped, missing or extra arguments, calls
tools it cannot see, confirms, corrects and declines at random, and calls the agent's
irreversible tools early or twice. It is a ``ModelPolicy`` for the direct driver, and its
``step`` makes it a dynamic step of ``ScriptedLLM``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from pipecat_steward.core.slots import Action
from pipecat_steward.testing.chaos_surface import AgentSurface
from pipecat_steward.testing.scenario import ScenarioCall, ScenarioInference, ScenarioTurn
from pipecat_steward.testing.script import Call, Say, Step

__all__ = [
    "FILLERS",
    "HESITATIONS",
    "ChaosHost",
    "PLAIN_AFFIRMATIONS",
    "ChaosCaller",
    "ChaosModel",
    "is_plain_affirmation",
    "carries_content",
]

PLAIN_AFFIRMATIONS = ("yes", "yeah", "yes please", "that's right", "correct", "sounds good", "yep")
"""Affirmations that carry nothing else: the only words that confirm under the strict rule."""

HESITATIONS = ("hmm, let me think", "not sure", "hold on a second")
"""Turns that only hold the floor: they carry nothing that could change an answer."""

FILLERS = (
    *HESITATIONS,
    "what are your opening hours?",
    "do you have parking?",
    "did you see the game last night?",
    "my cat just walked over the keyboard",
)
"""Turns that give no value (hesitations, deflections, questions, off-topic talk)."""

_REFUSALS = ("no", "I'd rather not say", "skip that", "no thanks", "I don't want to give that")
_CLAIMS = (
    "I've booked it for you.",
    "Payment is done.",
    "All set, your order is cancelled.",
    "Great, I've sent the summary.",
    "Done! You're confirmed.",
)
_TEXTS = ("Sure.", "Could you tell me more?", "Let me check that.", "Okay!", "Hmm.")
_NAMES = ("Zoë Ñúñez", "李雷", "O'Brien-Smith", "Ana", "Dr. Amélie Dupont", "محمد")
_WORDS = ("alpha", "table", "order", "tomorrow", "please", "really", "the", "and", "ok")


def _norm(text: str) -> str:
    return text.strip().lower().rstrip(".!")


def is_plain_affirmation(text: str) -> bool:
    """True when ``text`` is an affirmation and nothing else."""
    return _norm(text) in PLAIN_AFFIRMATIONS


def carries_content(text: str) -> bool:
    """True when ``text`` may legitimately change an answer (not empty, a hesitation or a bare yes).

    Questions and off-topic talk carry words: whether they change an answer ("could you do so
    please?" after an offer) is the model's reading of language, not a rule code can check.
    """
    norm = _norm(text)
    return bool(norm) and norm not in PLAIN_AFFIRMATIONS and norm not in HESITATIONS


class Values:
    """Seeded values of every kind, valid and invalid."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def of(self, kind: str, slots: Sequence[str] = ()) -> Any:
        """A plausible value of ``kind``."""
        r = self.rng
        if kind in ("integer", "number"):
            return r.choice([1, 2, 4, 6, 8, 12, 0, -3, 10**6])
        if kind == "boolean":
            return r.choice([True, False])
        if kind == "date":
            return r.choice(["2026-07-17", "2026-08-02", "2025-01-01", "2026-02-30"])
        if kind == "slot":
            return r.choice(list(slots) or ["nothing"])
        return self.text()

    def text(self) -> str:
        """A free-text value: a name, an id, an email, a phone, a date, a number."""
        r = self.rng
        return r.choice(
            [
                r.choice(_NAMES),
                f"ABC-{r.randint(1000, 9999)}",
                f"user{r.randint(1, 99)}@example.com",
                "not-an-email",
                f"555-{r.randint(1000, 9999)}",
                r.choice(["July 4th", "next friday", "2026-07-20", "yesterday"]),
                str(r.choice([2, 5, 15, 40, 250])),
                r.choice(["none", "under a thousand", "next few weeks", "Trello"]),
            ]
        )

    def mistyped(self, kind: str) -> Any:
        """A value of the wrong type for ``kind``."""
        r = self.rng
        if kind in ("integer", "number", "boolean"):
            return r.choice(["four", "", "lots", None, [1, 2]])
        return r.choice([42, None, {"nested": True}, ["a"], 3.5])


class ChaosCaller:
    """A seeded caller: each turn one utterance from the grammar, reacting to what was asked."""

    def __init__(self, rng: random.Random, long_words: int = 300) -> None:
        self.rng = rng
        self.values = Values(rng)
        self.long_words = long_words

    def say(self, asked: Sequence[str] = ()) -> str:
        """The next utterance; ``asked`` is what the bot just asked for (may be empty)."""
        r = self.rng
        kind = r.choices(
            ["plain", "content_yes", "value", "correction", "refusal", "filler", "blank", "long"],
            weights=[20, 8, 30, 8, 8, 12, 7, 3],
        )[0]
        value = self.values.text()
        if kind == "plain":
            return r.choice(PLAIN_AFFIRMATIONS)
        if kind == "content_yes":
            return r.choice([f"yes, {value}", f"yeah but make it {value}", f"correct, and {value}"])
        if kind == "value":
            about = f"{asked[0].replace('_', ' ')} is " if asked and r.random() < 0.5 else ""
            return f"{about}{value}"
        if kind == "correction":
            return r.choice(
                [f"actually, {value}", f"no, I meant {value}", f"sorry, {value} not that"]
            )
        if kind == "refusal":
            return r.choice(_REFUSALS)
        if kind == "filler":
            return r.choice(FILLERS)
        if kind == "blank":
            return r.choice(["", " ", "\t  "])
        return " ".join(r.choice(_WORDS) for _ in range(self.long_words)) + f" {value}"


class ChaosModel:
    """A seeded adversarial model over an agent's surface."""

    def __init__(
        self,
        rng: random.Random,
        surface: AgentSurface,
        max_inferences: int = 3,
        *,
        arg_faults: bool = True,
    ) -> None:
        self.rng = rng
        self.arg_faults = arg_faults
        self.surface = surface
        self.values = Values(rng)
        self.max_inferences = max_inferences

    def __call__(self, action: Action, turn: ScenarioTurn) -> ScenarioInference | None:
        """The next inference of ``turn`` (None: stop and let the directive be spoken)."""
        if len(turn.llm) >= self.max_inferences:
            return None
        return self.infer(sorted(set(action.visible_tools) | set(self.surface.own)))

    def step(self, snapshot: Any) -> Step:
        """A ``ScriptedLLM`` dynamic step: the same choice from the tools the context shows."""
        inference = self.infer(list(getattr(snapshot, "tools", ())))
        said: list[Say | Call] = [Say(inference.say)] if inference.say else []
        return said + [Call(c.name, c.args) for c in inference.calls]

    def infer(self, visible: Sequence[str]) -> ScenarioInference:
        """Pick one inference given the names of the visible tools."""
        r = self.rng
        move = r.choices(
            ["say", "claim", "visible", "hidden", "steward", "irreversible"],
            weights=[20, 8, 40, 8, 14, 10],
        )[0]
        if move in ("say", "claim"):
            return ScenarioInference(say=r.choice(_CLAIMS if move == "claim" else _TEXTS) or None)
        names = self._pick(move, visible)
        if not names:
            return ScenarioInference(say=r.choice(_TEXTS) or None)
        calls = [ScenarioCall(name=n, args=self.args(n)) for n in names]
        return ScenarioInference(calls=calls, say=r.choice(_CLAIMS) if r.random() < 0.2 else None)

    def _pick(self, move: str, visible: Sequence[str]) -> list[str]:
        r = self.rng
        tools = self.surface.tools
        if move == "visible":
            pool = [t for t in visible if t in tools] or list(visible)
        elif move == "hidden":
            pool = [t for t in tools if t not in visible]
        elif move == "steward":
            pool = [t for t in tools if _is_steward(t)]
        else:
            pool = list(self.surface.irreversible)
        if not pool:
            return []
        name = r.choice(pool)
        return [name, name] if move == "irreversible" and r.random() < 0.4 else [name]

    def args(self, name: str) -> dict[str, Any]:
        """Arguments for ``name``: valid, mistyped, missing or extra."""
        r = self.rng
        params: Mapping[str, str] = self.surface.tools.get(name, {})
        args = {p: self.values.of(t, self.surface.slots) for p, t in params.items()}
        weights = [55, 15, 15, 15] if self.arg_faults else [1, 0, 0, 0]
        variant = r.choices(["valid", "mistyped", "missing", "extra"], weights=weights)[0]
        if variant == "mistyped" and args:
            key = r.choice(list(args))
            args[key] = self.values.mistyped(params[key])
        elif variant == "missing" and args:
            del args[r.choice(list(args))]
        elif variant == "extra":
            args["unexpected"] = self.values.text()
        return args


def _is_steward(name: str) -> bool:
    return any(word in name for word in ("confirm", "reject", "correct", "decline", "cancel"))


class ChaosHost:
    """The platform around the call: writes linked variables and injects judge verdicts at random.

    Args:
        rng: The seeded source.
        linked: Linked variable name → its type and allowed values.
        steps: Procedure step ids a verdict may name.
    """

    def __init__(
        self,
        rng: random.Random,
        linked: Mapping[str, tuple[str, Sequence[str]]],
        steps: Sequence[str],
    ) -> None:
        self.rng = rng
        self.linked = linked
        self.steps = steps
        self.values = Values(rng)

    def writes(self) -> dict[str, Any]:
        """Host writes before a caller turn (often none)."""
        if not self.linked or self.rng.random() > 0.3:
            return {}
        name = self.rng.choice(sorted(self.linked))
        kind, allowed = self.linked[name]
        if allowed:
            return {name: self.rng.choice(list(allowed))}
        return {name: self.rng.choice([0, 40, 150]) if kind == "number" else self.values.of(kind)}

    def verdict(self) -> tuple[list[str], list[str]] | None:
        """A judge verdict before a caller turn: ``(satisfied, not_applicable)``, often none."""
        if not self.steps or self.rng.random() > 0.4:
            return None
        steps = self.rng.sample(list(self.steps), min(len(self.steps), self.rng.randint(1, 4)))
        return (steps, []) if self.rng.random() < 0.8 else ([], steps)
