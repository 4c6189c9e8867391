"""Two calls never share an idempotency key, with or without a checkpoint store: a shared key
would make the backend answer the second caller's request from the first one's record (the
second statement never sent, the second cancellation never made)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.runtime.transactions import TransactionSession
from pipecat_steward.storage.checkpoints import Identity, open_store

AGENT = Path(__file__).resolve().parents[2] / "bots" / "order_desk"


async def confirmed_key(session: TransactionSession) -> str:
    """Cancel PED-1001 in ``session`` and return the key its executor is called with."""
    session.decide("I want to cancel order PED-1001", first_turn=True)
    session.tool_call("start_retail_order_cancel", {"order_id": "PED-1001", "quote": "cancel"})
    for text in ("", "", "yes"):
        for call in session.decide(text).calls:
            if "idempotency_key" in call.args:
                return str(call.args["idempotency_key"])
            await session.run_call(call)
    raise AssertionError("the cancellation never reached its executor")


def test_calls_without_a_store_never_share_a_key() -> None:
    agent = load_agent(AGENT)
    keys = {asyncio.run(confirmed_key(TransactionSession(agent))) for _ in range(3)}
    assert len(keys) == 3


def test_calls_with_a_store_are_keyed_by_identity() -> None:
    agent = load_agent(AGENT)

    def key(who: Identity) -> str:
        checkpointer = Checkpointer(open_store("memory:"), who)
        return asyncio.run(confirmed_key(TransactionSession(agent, checkpointer=checkpointer)))

    keys = [key(Identity(t, "order_desk", s)) for t, s in (("a", "1"), ("a", "2"), ("b", "1"))]
    assert len(set(keys)) == 3 and key(Identity("a", "order_desk", "1")) == keys[0]


def test_a_call_id_scopes_the_keys_of_a_call_without_a_store() -> None:
    agent = load_agent(AGENT)
    same = {asyncio.run(confirmed_key(TransactionSession(agent, call_id="c-1"))) for _ in range(2)}
    other = asyncio.run(confirmed_key(TransactionSession(agent, call_id="c-2")))
    assert len(same) == 1 and other not in same
