"""The echo rule: which flowchart reply a wizard's free text says, by template similarity.

Wizards often type a step in their own words instead of picking its suggestion ("Shall I book
it for you?" for "Would you like me to book it for you?"). The replay counts such free text as
the pick of the step whose template it is closest to, by one generic rule:

- Texts are bags of lower-cased words (``{placeholders}`` removed), weighted by TF-IDF, where
  the documents are every reply template of every task in the folder (so ``you`` or ``would``
  weigh little and ``book`` or ``pin`` much); similarity is the cosine, of the whole texts or
  of any sentence of one with any sentence of the other, whichever is highest (a template
  that informs and then asks is matched by free text that only asks).
- Polarity: a text with a negation word (``no``, ``not``, ``sorry``, ``unavailable``, ``n't``
  …) only matches templates with one, and a text without only templates without, so "a
  viewing is available" is never taken for "no viewing is available".
- The candidates are all of the task's replies except queries and branch labels (outcomes,
  ``yes``/``no``, alternative-path labels): the shared replies (``anything_else``,
  goodbyes, ``out_of_scope``) and off-graph replies compete too, so a goodbye is not taken
  for a step.
- The best candidate counts when its cosine is at least ``ECHO_MIN`` and it beats every
  candidate with a different template by at least ``ECHO_MARGIN``; replies with the same
  template text (``goodbye_1`` and another task's bye) are not rivals.

How often it is wrong is measured on the wizards' own drafts: STAR logs the text a wizard
typed before asking for suggestions and the label the wizard then picked, so every such pair
is a labelled paraphrase (:func:`measure_echo`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pipecat_steward.replay.star_data import flowchart_graph, flowchart_replies

__all__ = ["ECHO_MARGIN", "ECHO_MIN", "EchoMatcher", "measure_echo"]

ECHO_MIN = 0.4
ECHO_MARGIN = 0.1
_WORD = re.compile(r"[a-z0-9]+")
_SLOT = re.compile(r"\{[^}]*\}")
_NEGATIONS = frozenset(
    {
        "no",
        "not",
        "nothing",
        "none",
        "never",
        "cannot",
        "unable",
        "unavailable",
        "unfortunately",
        "sorry",
        "t",
    }
)  # ``t`` is the tail of can't, isn't
_NOT_REPLIES = frozenset(
    {"yes", "no", "available", "unavailable", "query_success", "query_failure"}
)


def words(text: str) -> list[str]:
    """The lower-cased words of a text, template placeholders removed."""
    return _WORD.findall(_SLOT.sub(" ", text.lower()))


def _candidates(flowchart: Mapping[str, Any]) -> dict[str, str]:
    """The replies a wizard's free text may say (by step id): all but queries and branch labels."""
    graph = flowchart_graph(flowchart)
    targets = set(graph.values())
    branches = {k for k in graph if k not in targets and k != "hello"}
    return {
        label: text
        for label, text in flowchart_replies(flowchart).items()
        if label not in _NOT_REPLIES
        and label not in branches
        and not (label == "query" or label.startswith("query_"))
    }


Vector = dict[str, float]


class EchoMatcher:
    """Names the reply a free text says, per task (see the module rules)."""

    def __init__(self, flowcharts: Mapping[str, Mapping[str, Any]]) -> None:
        self.replies = {t: _candidates(f) for t, f in flowcharts.items()}
        docs = [set(words(x)) for r in self.replies.values() for x in r.values()]
        self._df = Counter(w for d in docs for w in d)
        self._n = len(docs)
        self._negative = {
            t: {label: _negative(text) for label, text in r.items()}
            for t, r in self.replies.items()
        }
        self._vectors = {
            t: {label: [self.vector(x) for x in _parts(text)] for label, text in r.items()}
            for t, r in self.replies.items()
        }

    def vector(self, text: str) -> Vector:
        """The text's unit TF-IDF vector."""
        counts = Counter(words(text))
        raw = {
            w: n * (math.log((self._n + 1) / (self._df.get(w, 0) + 1)) + 1)
            for w, n in counts.items()
        }
        norm = math.sqrt(sum(x * x for x in raw.values())) or 1.0
        return {w: x / norm for w, x in raw.items()}

    def match(self, task: str, text: str) -> str | None:
        """The reply label of ``task`` the text says, or None."""
        vs = [self.vector(x) for x in _parts(text)]
        negative = _negative(text)
        scored = sorted(
            (
                (max(_cos(v, u) for v in vs for u in us), label)
                for label, us in self._vectors.get(task, {}).items()
                if self._negative[task][label] == negative
            ),
            reverse=True,
        )
        if not scored or scored[0][0] < ECHO_MIN:
            return None
        top, label = scored[0]
        same = " ".join(words(self.replies[task][label]))
        rivals = [
            s for s, other in scored[1:] if " ".join(words(self.replies[task][other])) != same
        ]
        return label if not rivals or top - rivals[0] >= ECHO_MARGIN else None


_SENTENCE = re.compile(r"(?<=[.?!])\s+")


def _parts(text: str) -> list[str]:
    """The whole text and, when it has several, each of its sentences."""
    parts = [p for p in _SENTENCE.split(text.strip()) if words(p)]
    return [text, *parts] if len(parts) > 1 else [text]


def _cos(v: Vector, u: Vector) -> float:
    return sum(x * u.get(w, 0.0) for w, x in v.items())


def _negative(text: str) -> bool:
    return not _NEGATIONS.isdisjoint(words(text))


def measure_echo(
    matcher: EchoMatcher,
    drafts: Iterable[tuple[str, str, str]],
    steps: Mapping[str, Iterable[str]],
) -> dict[str, Any]:
    """How often the echo rule names a step, and a wrong one, on labelled drafts.

    Args:
        matcher: The rule.
        drafts: (task, the wizard's own draft, the label the wizard then picked).
        steps: Task → its ask and inform step labels (only naming a step changes a gate).

    Returns:
        ``drafts`` (pairs whose picked label is a reply of the task), ``named_step`` (the rule
        named a step), ``same_template`` (it was the picked label or one with the same
        template), ``other_template`` and ``wrong_share`` (other / named).
    """
    seen = named = right = 0
    for task, text, picked in drafts:
        replies = matcher.replies.get(task, {})
        if picked not in replies:
            continue
        seen += 1
        label = matcher.match(task, text)
        if label is None or label not in set(steps.get(task, ())):
            continue
        named += 1
        right += words(replies[label]) == words(replies[picked])
    return {
        "drafts": seen,
        "named_step": named,
        "same_template": right,
        "other_template": named - right,
        "wrong_share": round((named - right) / named, 4) if named else None,
    }
