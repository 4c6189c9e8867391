"""``steward demo``: the Bella Notte reservation, played offline turn by turn.

The engine runs for real; the LLM is scripted by the scenario (its tool calls), and says the
engine's directive where the scenario gives no text.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipecat_steward.agent.loader import Agent, load_agent
from pipecat_steward.core.state import SessionState
from pipecat_steward.runtime.conversation import Conversation, Inference, RecordedCall, TurnRecord

if TYPE_CHECKING:
    from pipecat_steward.testing.scenario import ScenarioInference

BOTS = Path(__file__).resolve().parents[3] / "bots"


def add_parser(sub: Any) -> None:
    """Register ``steward demo``."""
    parser = sub.add_parser("demo", help="play the reservation example offline, turn by turn")
    parser.add_argument("--agent", type=Path, default=BOTS / "bella_notte", help="agent folder")
    parser.add_argument(
        "--scenario", default="happy_path", help="scenario name in the agent's scenarios/"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the scenario and print each turn with the slot state."""
    from pipecat_steward.testing.scenario import load_scenario

    agent = load_agent(args.agent)
    scenario = load_scenario(Path(args.agent) / "scenarios" / f"{args.scenario}.yaml")
    conv = Conversation(
        agent.flow,
        agent.tools,
        event_data=scenario.event_data or None,
        channel=scenario.channel,
    )
    print(f"== {agent.name}: {scenario.name}")
    for number, turn in enumerate(scenario.turns, 1):
        record = conv.turn(turn.user, _inferences(turn.llm))
        _print_turn(number, record, agent, conv.state)
    print(f"== status: {conv.state.status}")
    return 0


def _inferences(items: list[ScenarioInference]) -> list[Inference]:
    return [Inference([RecordedCall(c.name, c.args) for c in i.calls], i.say) for i in items]


def _print_turn(number: int, record: TurnRecord, agent: Agent, state: SessionState) -> None:
    print(f"\n[{number}] caller: {record.user}")
    for call in record.llm_calls:
        print(f"    llm → {call.name}({_args(call.args)}) {call.outcome}")
    for call in record.fired:
        print(f"    engine → {call.name}({_args(call.args)}) {call.outcome}")
    for utterance in record.bot:
        print(f"    bot ({utterance.source}): {utterance.text}")
    slots = [f"{n}={r.status}:{r.value}" for n, r in state.slots.items() if r.status != "empty"]
    print(f"    slots: {', '.join(slots) or '-'}")


def _args(args: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in dict(args).items())
