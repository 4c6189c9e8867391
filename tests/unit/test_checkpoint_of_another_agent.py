"""A checkpoint restores only into the agent that wrote it.

Two agents given one identity (an app that reuses an agent_id) restored each other's calls
without a word: Bella Notte's checkpoint came back as a clinic call, its slots and turn count
with it. A checkpoint now names the agent that wrote it, and a restore by another agent is an
invalid checkpoint (``on_invalid`` decides, as for any other). Older checkpoints, which do not
name their agent, restore as before.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.runtime.checkpointing import Checkpointer, InvalidCheckpoint
from pipecat_steward.runtime.engine import open_session
from pipecat_steward.storage.checkpoints import CheckpointStore, Identity, open_store

BOTS = Path(__file__).resolve().parents[2] / "bots"
NAMES = ["bella_notte", "clinic", "lead_capture", "order_desk"]  # slot and transaction agents
AGENTS = {name: load_agent(BOTS / name) for name in NAMES}
IDENTITY = Identity("acme", "shared-agent-id", "call-1")


async def _saved_by(name: str, store: CheckpointStore) -> dict[str, object]:
    writer = open_session(AGENTS[name], checkpointer=Checkpointer(store, IDENTITY))
    await writer.restore()
    writer.decide("", first_turn=True)
    writer.turns_done = 1
    await writer.save()
    return writer.payload()


@pytest.mark.parametrize(("wrote", "restores"), list(itertools.permutations(NAMES, 2)))
async def test_a_checkpoint_of_another_agent_is_refused(wrote: str, restores: str) -> None:
    store = open_store("memory:")
    await _saved_by(wrote, store)
    reader = open_session(AGENTS[restores], checkpointer=Checkpointer(store, IDENTITY))
    with pytest.raises(InvalidCheckpoint, match=f"the checkpoint is of agent '{wrote}'"):
        await reader.restore()
    assert reader.turns_done == 0


@pytest.mark.parametrize("name", NAMES)
async def test_the_agent_that_wrote_it_restores_it_and_so_does_an_older_checkpoint(
    name: str,
) -> None:
    store = open_store("memory:")
    saved = await _saved_by(name, store)
    assert saved["agent"] == name
    again = open_session(AGENTS[name], checkpointer=Checkpointer(store, IDENTITY))
    assert await again.restore() and again.turns_done == 1
    older = {k: v for k, v in saved.items() if k != "agent"}  # written before checkpoints named it
    assert again.payload_problem(older) is None
