"""What a plain "yes" next turn takes up, and the form a checkpoint keeps it in.

After a detour ends, the transaction it set aside while collecting is offered back ("shall we
go back to…?"); after a check that could not be made, a retry is offered. The caller's next
plain yes takes the offer; any other words let it go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pipecat_steward.core.variables import JsonValue

__all__ = ["Offer", "OfferKind", "offer_from_json", "offer_to_json"]

OfferKind = Literal["resume", "retry"]


@dataclass(frozen=True, slots=True)
class Offer:
    """What the caller's next plain "yes" takes up.

    Attributes:
        kind: ``"resume"`` brings back the transaction set aside for a detour; ``"retry"``
            starts again a transaction whose check could not be made.
        intent: The transaction's intent.
        arguments: What a retry starts the transaction with (a resume has none).

    """

    kind: OfferKind
    intent: str
    arguments: Mapping[str, JsonValue] = field(default_factory=lambda: {})


def offer_to_json(offer: Offer | None) -> dict[str, Any] | None:
    """The offer as the checkpoint keeps it."""
    if offer is None:
        return None
    kept: dict[str, Any] = {"kind": offer.kind, "intent": offer.intent}
    if offer.kind == "retry":
        kept["arguments"] = dict(offer.arguments)
    return kept


def offer_from_json(data: object) -> Offer | None:
    """The offer a checkpoint kept (None for none, or for a kind this version does not know)."""
    if not isinstance(data, Mapping):
        return None
    kept = cast(Mapping[str, Any], data)
    intent, kind = str(kept.get("intent")), kept.get("kind")
    if kind == "resume":
        return Offer("resume", intent)
    if kind == "retry":
        arguments = kept.get("arguments")
        if not isinstance(arguments, Mapping):
            arguments = {}
        return Offer("retry", intent, dict(cast(Mapping[str, JsonValue], arguments)))
    return None
