"""An order-desk intent catalog (cancel, track, contest, bill) shared by the transaction tests."""

from __future__ import annotations

from typing import Any

from pipecat_steward.core.transactions import Catalog, IntentSpec, ToolUse, TurnInputs

CANCEL = "retail_order_cancel"
TRACK = "retail_order_track"
CONTEST = "charge_contest"
BILL = "billing_statement"
AT = "2030-01-01T10:00:00Z"
SCOPE = "acme/order_desk/s-1"


def catalog() -> Catalog:
    return Catalog.of(
        [
            IntentSpec(
                CANCEL,
                ("order_id",),
                "cancel_order",
                "Cancel order {order_id}?",
                pre_validation="check_cancellable",
                domain="retail_order",
                cues=("cancel", "cancellation"),
            ),
            IntentSpec(
                TRACK,
                ("order_id",),
                "track_order",
                "Look up order {order_id}?",
                domain="retail_order",
                cues=("track", "where is", "status"),
            ),
            IntentSpec(
                CONTEST,
                ("subject", "amount"),
                "contest_charge",
                "Contest the {subject} charge of {amount}?",
                setters={"set_contest_subject": ("subject",), "set_contest_amount": ("amount",)},
                domain="billing",
                cues=("contest", "dispute"),
            ),
            IntentSpec(
                BILL,
                ("period",),
                "show_bill",
                "Show the bill for {period}?",
                domain="billing",
                cues=("bill", "statement"),
            ),
        ]
    )


def turn(text: str, *calls: tuple[str, dict[str, Any]], **proposals: Any) -> TurnInputs:
    """One caller turn: its words, the LLM's tool calls and the extractor's proposals."""
    return TurnInputs(tuple(ToolUse(name, args) for name, args in calls), proposals, text)
