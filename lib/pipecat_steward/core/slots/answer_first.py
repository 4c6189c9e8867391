"""The last stage of every engine's turn: answer the caller's question first.

The rule: when the caller's words this turn ask something, their question outranks whatever
the engine planned to say next. A plain preempt (a canned message spoken instead of the model)
becomes the model's directive instead, with a hint to answer the question briefly and then
relay the message in the same reply. Forced preempts (escalation, a hard steer-back, a forced
announcement, a transaction's confirmation question or outcome), actions that run calls and
actions of a finished session are left alone: those must be said as written.

Both engines end their turn with this stage: the slot engine's ``step`` and the transaction
turn logic (``core.transactions.desk``). It lives beside ``Action``, the answer both engines
give.
"""

from __future__ import annotations

import dataclasses
import re

from pipecat_steward.core.slots.action import Action, Hint

__all__ = ["QUESTION_HINT", "answer_question_first", "is_question"]

_INTERROGATIVE = re.compile(
    r"^(who|what|when|where|why|how|which|whose|can|could|do|does|did|is|are|will|would|should|may)\b",
    re.I,
)
QUESTION_HINT = Hint(
    "steer_back",
    "The caller asked a question. Answer it first, briefly and concretely, then relay the "
    "directive in the same reply.",
)


def is_question(text: str) -> bool:
    """True when ``text`` asks something (a question mark, or a sentence opening a question)."""
    if "?" in text:
        return True
    return any(_INTERROGATIVE.match(s.strip()) for s in re.split(r"[.!;]", text) if s.strip())


def answer_question_first(action: Action, caller_words: str) -> Action:
    """``action``, with a plain preempt turned into the model's directive when the caller asked.

    Args:
        action: What the engine decided for this invocation.
        caller_words: The caller's words of the current turn (also on re-invocations after
            tool results, which carry no words of their own).
    """
    if not caller_words or not is_question(caller_words):
        return action
    if not action.preempt or action.force_preempt or action.calls or action.status != "in_progress":
        return action
    hint = QUESTION_HINT.render()
    return dataclasses.replace(
        action,
        preempt=False,
        message="",
        response=(),
        hints=(*action.hints, QUESTION_HINT),
        suffix=f"{action.suffix}\n{hint}",
    )
