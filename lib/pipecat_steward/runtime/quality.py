"""Conversation-quality rules the adapter applies on top of the engine.

The caller's question outranks the next slot: on a turn whose caller text asks something, a
preempt that would speak a canned message instead becomes the LLM's directive, so the model
answers the question first and relays the message after it. Forced preempts (escalation, hard
steer-back, forced announcements) and actions that run calls are left alone.
"""

from __future__ import annotations

import dataclasses
import re

from pipecat_steward.core.slots import Action, Hint

__all__ = ["QUESTION_HINT", "answer_questions_first", "is_question"]

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


def answer_questions_first(action: Action, user_text: str) -> Action:
    """Turn a plain preempt into an LLM directive when the caller asked a question."""
    if not user_text or not is_question(user_text):
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
