"""What a plain "yes" next turn takes up, and the form a checkpoint keeps it in.

After a detour ends, the transaction it set aside while collecting is offered back ("shall we
go back to…?"); after a check that could not be made, a retry is offered. The caller's next
plain yes takes the offer; any other words let it go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never, cast

from pipecat_steward.core.variables import JsonValue

__all__ = ["Offer", "ResumeOffer", "RetryOffer", "offer_from_json", "offer_to_json"]


@dataclass(frozen=True, slots=True)
class ResumeOffer:
    """A "yes" brings back the transaction set aside for a detour."""

    intent: str


@dataclass(frozen=True, slots=True)
class RetryOffer:
    """A "yes" starts again a transaction whose check could not be made."""

    intent: str
    arguments: Mapping[str, JsonValue] = field(default_factory=lambda: {})


Offer = ResumeOffer | RetryOffer
"""What the caller's next plain "yes" takes up."""


def offer_to_json(offer: Offer | None) -> dict[str, Any] | None:
    """The offer as the checkpoint keeps it."""
    match offer:
        case None:
            return None
        case ResumeOffer(intent=intent):
            return {"kind": "resume", "intent": intent}
        case RetryOffer(intent=intent, arguments=arguments):
            return {"kind": "retry", "intent": intent, "arguments": dict(arguments)}
        case _:  # pragma: no cover - the union is closed
            assert_never(offer)


def offer_from_json(data: object) -> Offer | None:
    """The offer a checkpoint kept (None for none, or for a kind this version does not know)."""
    if not isinstance(data, Mapping):
        return None
    kept = cast(Mapping[str, Any], data)
    intent, kind = str(kept.get("intent")), kept.get("kind")
    if kind == "resume":
        return ResumeOffer(intent)
    if kind == "retry":
        arguments = kept.get("arguments")
        if not isinstance(arguments, Mapping):
            arguments = {}
        return RetryOffer(intent, dict(cast(Mapping[str, JsonValue], arguments)))
    return None
