"""``steward forecast AGENT_DIR [--turns N]``: what the agent's logic_slm calls will cost.

Resolves the agent's logic_slm stage (see :mod:`pipecat_steward.cli._slm_agent`), prices each
consumer against the dated price book and prints cost per call, per 1,000 calls, per turn at
low / mid / high adherence-check rates and per conversation. An unpriced model makes the
forecast ``partial`` and names the gap; it is never shown as free.
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipecat_steward.cli._slm_agent import agent_stage
from pipecat_steward.cli.arguments import whole_number
from pipecat_steward.core.costing import (
    Forecast,
    ForecastAssumptions,
    ForecastLine,
    Scope,
    forecast,
)
from pipecat_steward.exceptions import ConfigError, SLMResolutionError
from pipecat_steward.slm.config import SCOPES
from pipecat_steward.slm.manifests import load_price_book

__all__ = ["add_parser", "render", "run"]


def add_parser(sub: Any) -> None:
    """Register ``steward forecast``."""
    parser = sub.add_parser("forecast", help="forecast the logic_slm cost of an agent")
    parser.add_argument("agent_dir", type=Path, metavar="AGENT_DIR", help="agent folder")
    parser.add_argument(
        "--turns", type=whole_number(1), default=10, help="caller turns per conversation"
    )
    parser.add_argument("--stack", help="stack manifest name (overrides agent.yaml aux.stack)")
    parser.add_argument("--prices", type=Path, help="price book (default: shared prices.json)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the forecast; exit 2 with the problem named when the agent cannot be resolved."""
    try:
        stage, stack = agent_stage(args.agent_dir, args.stack)
        book = load_price_book(args.prices)
    except (ConfigError, SLMResolutionError) as err:
        print(f"steward forecast: {err}", file=sys.stderr)
        return 2
    models: dict[Scope, tuple[str, str]] = {
        scope: (stage.provider, stage.model_for(scope)) for scope in SCOPES
    }
    result = forecast(book, models, ForecastAssumptions(), args.turns)
    print(render(result, f"{args.agent_dir} (stack {stack or 'none'})"))
    return 0


def _money(value: Decimal | None) -> str:
    """Format money with enough places for fractions of a cent; ``unpriced`` for None."""
    return "unpriced" if value is None else f"${value.normalize():f}"


def _line(line: ForecastLine) -> str:
    """One consumer's row."""
    cost = line.cost
    name = f"{cost.provider}/{cost.model}"
    return (
        f"  {line.scope:<11} {name:<40} "
        f"{cost.input_tokens:>4}/{cost.output_tokens:<4} "
        f"{_money(cost.per_call):>14} {_money(cost.per_thousand_calls):>12}"
    )


def render(result: Forecast, title: str) -> str:
    """Render a forecast as the text ``steward forecast`` prints."""
    known = " (known part only)" if result.status == "partial" else ""
    levels = ("low", "mid", "high")
    rows = [
        f"logic_slm forecast for {title}",
        f"price book {result.price_book_date} ({result.currency}); status: {result.status}",
        f"  {'scope':<11} {'provider/model':<40} {'in/out':<9} {'per call':>14} {'per 1k':>12}",
        *(_line(line) for line in result.lines),
        "per turn (low / mid / high adherence checks)"
        + known
        + ": "
        + " / ".join(_money(result.per_turn(level)) for level in levels),
        f"per conversation of {result.turns} turns{known}: "
        + " / ".join(_money(result.per_conversation(level)) for level in levels),
        "llm_judge runs per gated tool call, so it is priced per call only.",
    ]
    rows += [f"GAP: {gap}" for gap in result.gaps]
    rows += [f"note: {note}" for note in result.notes]
    return "\n".join(rows)
