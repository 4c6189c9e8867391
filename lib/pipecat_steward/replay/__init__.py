"""Replays of public dialogue data through the slot-filling engine, and the engine benchmark.

``replay_split`` builds one flow per Schema-Guided Dialogue service, feeds each user turn's gold
values as tool calls and measures how closely the engine's state and task firing follow the gold.
``bench`` times the engine on synthetic flows.
"""

from pipecat_steward.replay.metrics import KEYS, Metrics
from pipecat_steward.replay.sgd_data import Dialogue, load_dialogues, load_schema, parse_dialogue
from pipecat_steward.replay.sgd_flow import build_flow_config, compile_service
from pipecat_steward.replay.sgd_format import SgdFormatError
from pipecat_steward.replay.sgd_replay import Replayer, replay_split

__all__ = [
    "KEYS",
    "Dialogue",
    "Metrics",
    "Replayer",
    "SgdFormatError",
    "build_flow_config",
    "compile_service",
    "load_dialogues",
    "load_schema",
    "parse_dialogue",
    "replay_split",
]
