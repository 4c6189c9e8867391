"""Tallies and the report of a STAR replay (per task and overall, happy and unhappy apart)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipecat_steward.replay.star_compile import StarProcedure
from pipecat_steward.replay.star_play import GateCall

__all__ = ["BASELINES", "KEYS", "Report", "VetoRecord", "macro_f1"]

KEYS = (
    "gold_queries_allowed_happy",
    "perturbations_caught",
    "gold_queries_allowed_unhappy",
    "next_action_happy",
    "next_action_unhappy",
    "dialogues",
    "dialogues_per_second",
)

BASELINES: dict[str, Any] = {
    "setting": "zero-shot task transfer: trained on the other STAR tasks, tested on an unseen one",
    "star_paper": {
        "source": "Mosig, Mehri, Kober 2020, STAR: A Schema-Guided Dialog Dataset for Transfer "
        "Learning, arXiv:2010.11853 (schema-guided BERT models)",
        "f1": None,
        "accuracy": None,
        "note": "the per-model task-transfer figures were not found in the reference material "
        "available when this was written; left empty rather than guessed",
    },
    "schema_attention_model": {
        "source": "Mehri, Eskenazi 2021, Schema-Guided Paradigm for Zero-Shot Dialog, SIGDIAL "
        "2021, arXiv:2106.07056 (SAM)",
        "f1": None,
        "accuracy": None,
        "note": "its abstract reports +22 F1 over prior work in zero-shot settings; the table "
        "values were not found in the reference material available, so none are printed",
    },
    "what_differs": "the learned models read the dialogue history (user and wizard words, "
    "query results) and the task schema and predict every wizard action, free text included; "
    "the checklist reads only the flowchart plus this replay's evidence (which labels the "
    "wizard picked, whether the user replied, values heard from the gold queries) and "
    "predicts the next open flowchart step, 'hello' before any wizard action and "
    "'anything_else' once the checklist is complete; it has no training data at all",
}


@dataclass(frozen=True, slots=True)
class VetoRecord:
    """A gold query the gate vetoed, with each open step's class."""

    dialogue_id: str
    query: str
    open_steps: tuple[str, ...]
    classes: tuple[str, ...]
    message: str


@dataclass
class _Tally:
    queries: int = 0
    allowed: int = 0
    vetoes: list[VetoRecord] = field(default_factory=lambda: [])
    actions: list[tuple[str, str]] = field(default_factory=lambda: [])


@dataclass
class _Perturbations:
    made: Counter[str] = field(default_factory=lambda: Counter[str]())
    broken: Counter[str] = field(default_factory=lambda: Counter[str]())
    caught: Counter[str] = field(default_factory=lambda: Counter[str]())
    missed: list[dict[str, Any]] = field(default_factory=lambda: [])


def macro_f1(pairs: Sequence[tuple[str, str]]) -> float:
    """Macro-averaged F1 over every label that occurs as gold or prediction."""
    labels = {g for g, _ in pairs} | {p for _, p in pairs}
    scores: list[float] = []
    for label in labels:
        tp = sum(1 for g, p in pairs if g == label and p == label)
        fp = sum(1 for g, p in pairs if g != label and p == label)
        fn = sum(1 for g, p in pairs if g == label and p != label)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores) if scores else 0.0


def _agreement(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    n = len(pairs)
    return {
        "actions": n,
        "accuracy": round(sum(g == p for g, p in pairs) / n, 4) if n else None,
        "macro_f1": round(macro_f1(pairs), 4) if n else None,
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


class Report:
    """Accumulates what the replay saw."""

    def __init__(self, procs: Mapping[str, StarProcedure]) -> None:
        self.procs = procs
        self.tallies: dict[tuple[str, bool], _Tally] = {}
        self.perturb: dict[str, _Perturbations] = {}
        self.asks: dict[str, Counter[str]] = {}
        self.heard: Counter[tuple[str, bool, bool]] = Counter()
        self.guidance: Counter[str] = Counter()

    def _tally(self, task: str, happy: bool) -> _Tally:
        return self.tallies.setdefault((task, happy), _Tally())

    def query(self, task: str, happy: bool, veto: VetoRecord | None) -> None:
        """One gold query: allowed (``veto`` None) or vetoed."""
        tally = self._tally(task, happy)
        tally.queries += 1
        if veto is None:
            tally.allowed += 1
        else:
            tally.vetoes.append(veto)

    def veto_guidance(self, ready_open_step: bool) -> None:
        """Whether a perturbation's veto gave the guidance of an open step that is ready."""
        self.guidance[
            "veto_points_to_ready_open_step" if ready_open_step else "veto_points_elsewhere"
        ] += 1

    def result_guidance(self, step: str | None, following: str | None) -> None:
        """A query result's next-step note against the wizard's next flowchart pick."""
        if step is None:
            self.guidance["result_without_note"] += 1
        elif following is None:
            self.guidance["result_note_no_later_pick"] += 1
        else:
            self.guidance[
                "result_note_matches_next_pick"
                if step == following
                else "result_note_differs_from_next_pick"
            ] += 1

    def heard_only(self, task: str, happy: bool, allowed: bool) -> None:
        """One gold query of the run whose extraction stand-in has no fallback."""
        self.heard[(task, happy, allowed)] += 1

    def _heard_share(self, happy: bool, task: str | None = None) -> float | None:
        hits = [
            (t, a, n) for (t, h, a), n in self.heard.items() if h == happy and task in (None, t)
        ]
        return _share(sum(n for _, a, n in hits if a), sum(n for _, _, n in hits))

    def actions(self, task: str, happy: bool, pairs: Iterable[tuple[str, str]]) -> None:
        """Next-action pairs (gold, predicted) of a single-task dialogue."""
        self._tally(task, happy).actions.extend(pairs)

    def ask_checks(self, task: str, checks: Iterable[tuple[str, str]]) -> None:
        """Ask-rule outcomes for bound asks."""
        counter = self.asks.setdefault(task, Counter())
        counter.update(kind for _, kind in checks)

    def perturbation(
        self,
        task: str,
        kind: str,
        dialogue_id: str,
        broken: bool,
        caught: bool,
        open_steps: Sequence[str],
        call: GateCall,
    ) -> None:
        """One perturbation's outcome."""
        p = self.perturb.setdefault(task, _Perturbations())
        p.made[kind] += 1
        if broken:
            p.broken[kind] += 1
            p.caught[kind] += caught
            if not caught:
                p.missed.append(
                    {
                        "dialogue": dialogue_id,
                        "kind": kind,
                        "open": list(open_steps),
                        "allowed": call.allowed,
                        "message": call.message,
                    }
                )

    def summary(self, dialogues: int, seconds: Mapping[str, float]) -> dict[str, Any]:
        """The report as one JSON-safe mapping."""
        happy = [t for (_, h), t in self.tallies.items() if h]
        unhappy = [t for (_, h), t in self.tallies.items() if not h]
        broken = sum(sum(p.broken.values()) for p in self.perturb.values())
        caught = sum(sum(p.caught.values()) for p in self.perturb.values())
        return {
            "gold_queries_allowed_happy": _share(*_allowed(happy)),
            "perturbations_caught": _share(caught, broken),
            "gold_queries_allowed_unhappy": _share(*_allowed(unhappy)),
            "next_action_happy": _agreement([a for t in happy for a in t.actions]),
            "next_action_unhappy": _agreement([a for t in unhappy for a in t.actions]),
            "dialogues": dialogues,
            "dialogues_per_second": round(dialogues / seconds["replay"], 1)
            if seconds["replay"]
            else None,
            "gold_queries_allowed_happy_heard_only": self._heard_share(True),
            "gold_queries_allowed_unhappy_heard_only": self._heard_share(False),
            "seconds": {k: round(v, 2) for k, v in seconds.items()},
            "perturbations": self._perturbations(),
            "guidance": dict(sorted(self.guidance.items())),
            "veto_classes_happy": dict(
                Counter(c for t in happy for v in t.vetoes for c in v.classes)
            ),
            "veto_classes_unhappy": dict(
                Counter(c for t in unhappy for v in t.vetoes for c in v.classes)
            ),
            "ask_rule": {t: dict(c) for t, c in sorted(self.asks.items()) if c},
            "tasks": {t: self._task(t) for t in sorted(self.procs)},
            "baselines": BASELINES,
            "vetoes_happy": self._vetoes(True),
            "vetoes_unhappy": self._vetoes(False),
        }

    def _vetoes(self, happy: bool) -> list[dict[str, Any]]:
        return [
            _veto_json(t, v)
            for (t, h), tally in sorted(self.tallies.items())
            if h == happy
            for v in tally.vetoes
        ]

    def _perturbations(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind in ("drop", "early"):
            made = sum(p.made[kind] for p in self.perturb.values())
            broken = sum(p.broken[kind] for p in self.perturb.values())
            caught = sum(p.caught[kind] for p in self.perturb.values())
            out[kind] = {
                "made": made,
                "broke_an_edge": broken,
                "caught": caught,
                "caught_share": _share(caught, broken),
            }
        out["missed"] = [m for p in self.perturb.values() for m in p.missed]
        return out

    def _task(self, task: str) -> dict[str, Any]:
        proc = self.procs[task]
        out: dict[str, Any] = {
            "steps": {
                s.label: s.kind + (" (optional)" if s.optional else "") for s in proc.steps.values()
            },
            "validation_errors": [str(i) for i in proc.issues if i.severity == "error"],
            "validation_warnings": [str(i) for i in proc.issues if i.severity == "warning"],
            "fields": {s.label: list(s.fields) for s in proc.steps.values() if s.fields},
        }
        for happy, name in ((True, "happy"), (False, "unhappy")):
            tally = self.tallies.get((task, happy), _Tally())
            out[name] = {
                "queries": tally.queries,
                "allowed": _share(tally.allowed, tally.queries),
                "allowed_heard_only": self._heard_share(happy, task),
                "vetoes": len(tally.vetoes),
                "next_action": _agreement(tally.actions),
            }
        p = self.perturb.get(task, _Perturbations())
        out["perturbations"] = {
            "broke_an_edge": sum(p.broken.values()),
            "caught": sum(p.caught.values()),
        }
        return out


def _allowed(tallies: Sequence[_Tally]) -> tuple[int, int]:
    return sum(t.allowed for t in tallies), sum(t.queries for t in tallies)


def _veto_json(task: str, v: VetoRecord) -> dict[str, Any]:
    return {
        "task": task,
        "dialogue": v.dialogue_id,
        "query": v.query,
        "open": list(v.open_steps),
        "classes": list(v.classes),
        "message": v.message,
    }
