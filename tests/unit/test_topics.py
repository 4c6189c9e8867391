"""Topics: entering an intent arms its procedure; leaving it (cancel, completion) disarms it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.transactions import TransactionSession

AGENT = textwrap.dedent(
    """
    name: desk
    prompt: You help with orders.
    intents:
      - name: retail_order_cancel
        required: [order_id]
        executor: cancel_order
        confirmation: "Cancel {order_id}?"
    procedures:
      retail_order_cancel:
        prompt: |
          {{#step ask_reason}}
          Ask why they want to cancel before confirming.
          {{/step}}
        procedure:
          steps:
            - id: ask_reason
              title: Ask the reason
              complete_when: {kind: variable, expr: 'cancel_reason != null'}
    variables:
      - {name: cancel_reason, type: string, description: "Why the caller cancels."}
    """
)


def scopes(session: TransactionSession) -> list[str]:
    status = session.checklist()
    assert status is not None
    return list(status["scopes"])


def test_an_intent_arms_and_disarms_its_topic_procedure(tmp_path: Path) -> None:
    (tmp_path / "agent.yaml").write_text(AGENT)
    (tmp_path / "tools.py").write_text("def cancel_order(order_id, idempotency_key):\n    return {'success': True}\n")
    session = TransactionSession(load_agent(tmp_path))
    assert "retail_order_cancel" not in scopes(session)
    session.decide("cancel my order")
    session.tool_call("start_retail_order_cancel", {"quote": "cancel my order"})
    session.decide("")
    assert "retail_order_cancel" in scopes(session)
    assert session.state.variables.get("proc_ask_reason_done") is False
    session.host_write({"cancel_reason": "ordered twice"})
    assert session.state.variables["proc_ask_reason_done"] is True, "a variable step completes at once"
    session.decide("never mind")
    session.tool_call("cancel_transaction", {})
    session.decide("")
    assert "retail_order_cancel" not in scopes(session), "leaving the topic disarms it"
    assert "proc_ask_reason_done" not in session.state.variables, "its ungrouped state is cleared"
