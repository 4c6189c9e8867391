"""The engine is chosen once, from the agent (``Agent.engine``), for every host."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.runtime.transactions import TransactionSession

BOTS = Path(__file__).resolve().parents[2] / "bots"
ENGINES = {
    "bella_notte": "slots",
    "lead_capture": "slots",
    "clinic": "slots",
    "order_desk": "transactions",
}


@pytest.mark.parametrize("bot", ENGINES)
def test_each_bot_runs_on_its_engine(bot: str) -> None:
    agent = load_agent(BOTS / bot)
    assert agent.engine == ENGINES[bot]
    session = open_session(agent)
    assert isinstance(session, TransactionSession) == (agent.engine == "transactions")
