"""``StewardS2S`` handles the session events it owns and leaves the rest to ``Steward``.

The speech-to-speech adapter runs the engine on the caller's transcripts and records the model's
replies itself; every other event (the turn-boundary save among them) goes to the base steward,
so a ``StewardS2S`` attached to a cascaded LLM behaves as a ``Steward`` does.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

from pathlib import Path

from pipecat_steward.pipecat.s2s import StewardS2S
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints import Identity
from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore
from pipecat_steward.testing import Say, ScriptedLLM, TextPipeline

BELLA = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"


async def _saves_of(cls: type[Steward]) -> tuple[int, list[tuple[str, str]]]:
    """Play one caller turn on a cascaded LLM; the store's writes and the turn's utterances."""
    checkpointer = Checkpointer(MemoryCheckpointStore(), Identity("t", "bella", "call-1"))
    steward = cls.from_folder(BELLA, checkpointer=checkpointer)
    llm = ScriptedLLM([Say("Welcome to Bella Notte!")])
    steward.attach(llm)
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        await pipeline.say("Hi there")
        await pipeline.settle()
        await steward.relay.bus.drain()
    said = [(u.source, u.text) for t in steward.session.turns for u in t.bot]
    return checkpointer.saves, said


async def test_s2s_steward_on_a_cascaded_llm_saves_and_records_as_the_steward_does() -> None:
    plain, s2s = await _saves_of(Steward), await _saves_of(StewardS2S)
    assert plain[0] >= 1, "the cascade saves at the turn boundary"
    assert s2s == plain

