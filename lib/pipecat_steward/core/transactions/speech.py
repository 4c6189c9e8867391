"""What code says for transactions: outcomes, the next question, and the tools the model sees.

Every text here is rendered from the agent's intents and the transaction state, never by the
prompt: the confirmation question, an outcome ("Done."), the question for the next missing
parameter and the offer to go back to a request set aside for a detour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipecat_steward.core.slots.readback import render
from pipecat_steward.core.transactions.execution import confirmation_text
from pipecat_steward.core.transactions.intents import (
    CANCEL_TOOL,
    CONFIRM_TOOL,
    CORRECT_TOOL,
    REJECT_TOOL,
    Catalog,
    IntentSpec,
)
from pipecat_steward.core.transactions.model import (
    Transaction,
    TransactionState,
    TransactionStatus,
)

__all__ = ["IntentTexts", "Intents", "ToolSpec", "directive_text", "outcome_text", "tool_specs"]

S = TransactionStatus
ToolSpec = tuple[str, dict[str, Any], list[str]]
"""A tool's description, JSON-schema properties and required names."""


@dataclass(frozen=True, slots=True)
class IntentTexts:
    """What is said for one intent (each ``*_say`` may hold ``{parameter}`` fields).

    Attributes:
        name: The intent name.
        description: How the agent names the request ("cancel an order").
        ask: Parameter → the question that asks for it.
        done_say: Said when the executor succeeded (result fields fill it too).
        failed_say: Said when the executor failed.
        out_of_scope_say: Said when the pre-validation found the request not eligible.
        check_failed_say: Said when the pre-validation itself failed (a retry is offered).
        resume_say: Offers to go back to this request after a detour (``{intent}``).
    """

    name: str
    description: str = ""
    ask: Mapping[str, str] = field(default_factory=lambda: {})
    done_say: str = "Done."
    failed_say: str = "I'm sorry, that didn't go through. Let me get a colleague to help."
    out_of_scope_say: str = "I'm sorry, that isn't something I can do for this request."
    check_failed_say: str = "I couldn't check that right now. Would you like me to try again?"
    resume_say: str = "Shall we go back to your earlier request to {intent}?"

    @property
    def spoken_name(self) -> str:
        """The description, or the name when there is none."""
        return self.description or self.name


@dataclass(frozen=True, slots=True)
class Intents:
    """The agent's intents: the routing catalog and what is said for each."""

    catalog: Catalog
    texts: Mapping[str, IntentTexts]

    @classmethod
    def of(cls, specs: list[IntentSpec], texts: list[IntentTexts]) -> Intents:
        """Build from parallel lists (``Catalog.of`` validates the specs)."""
        return cls(Catalog.of(specs), {t.name: t for t in texts})


def outcome_text(intents: Intents, txn: Transaction) -> str:
    """What is said about a finished transaction, rendered with its arguments and result."""
    texts = intents.texts[txn.intent]
    values = {**txn.arguments, **(txn.evidence.result or {})}
    if txn.status == S.COMPLETED:
        return render(texts.done_say, values)
    if txn.status == S.OUT_OF_SCOPE:
        return render(texts.out_of_scope_say, values)
    return render(texts.failed_say, values)


def directive_text(intents: Intents, state: TransactionState) -> str:
    """What the model must get from the caller next: a request, an answer, or a parameter."""
    txn = state.active_transaction
    if txn is None:
        names = ", ".join(t.spoken_name for t in intents.texts.values())
        return f"How can I help you today? I can {names}."
    if txn.status == S.AWAITING_CONFIRMATION:
        return f"The caller must answer: {confirmation_text(intents.catalog, state)}"
    missing = [p for p in txn.required if p not in txn.arguments]
    ask = intents.texts[txn.intent].ask
    return " ".join(ask.get(p, f"What is the {p.replace('_', ' ')}?") for p in missing[:1])


def tool_specs(intents: Intents) -> dict[str, ToolSpec]:
    """Schemas of the transaction tools, for the model."""
    specs: dict[str, ToolSpec] = {}
    for spec in intents.catalog.intents.values():
        texts = intents.texts[spec.name]
        params: dict[str, Any] = {p: {"type": "string"} for p in spec.required}
        quote = {"quote": {"type": "string", "description": "the caller's words asking for it"}}
        specs[f"start_{spec.name}"] = (
            f"Start: {texts.spoken_name}. Pass any parameters the caller already gave.",
            {**params, **quote},
            [],
        )
        for param in spec.required:
            specs[f"set_{param}"] = (
                f"Record the {param.replace('_', ' ')} exactly as the caller gave it.",
                {param: {"type": "string"}},
                [param],
            )
    return {**specs, **_transaction_tools()}


def _transaction_tools() -> dict[str, ToolSpec]:
    """The tools of every transaction (fresh each time: callers may extend the schemas)."""
    return {
        CANCEL_TOOL: ("The caller abandons the current request.", {}, []),
        CONFIRM_TOOL: ("The caller agreed to the confirmation question.", {}, []),
        REJECT_TOOL: ("The caller declined the confirmation question.", {}, []),
        CORRECT_TOOL: (
            "The caller changed a value while confirming.",
            {"parameter": {"type": "string"}, "value": {"type": "string"}},
            ["parameter", "value"],
        ),
    }
