"""``steward report [--ledger PATH] [--prices PATH]``: observed logic_slm spend, in dollars.

Reads the usage ledger (default: the one every ``SLMClient`` meters to, ``$STEWARD_LEDGER``
or ``.steward/usage.sqlite``) and prices each row against the dated price book. Prints one
line per agent and one per call (session), each with calls, tokens and dollars, then a total.
A self-hosted model priced at zero is an explicit ``$0.000000 (self-hosted …)`` line; a model
missing from the book is ``unpriced`` and the total says it is partial, never free.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipecat_steward.core.costing import PriceBook, UsageEvent, event_cost
from pipecat_steward.exceptions import ConfigError, StoreError
from pipecat_steward.slm.manifests import load_price_book
from pipecat_steward.storage.ledger import SQLiteLedger, default_ledger_path

__all__ = ["Spend", "add_parser", "render", "run", "spend"]


@dataclass
class Spend:
    """What one group of rows cost.

    Attributes:
        dollars: The priced rows' cost.
        unpriced: Models with no price-book entry (their rows are not in ``dollars``).
        free: Notes of the zero-priced (self-hosted) models used.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: Decimal = Decimal(0)
    unpriced: set[str] = field(default_factory=lambda: set[str]())
    free: set[str] = field(default_factory=lambda: set[str]())

    def add(self, book: PriceBook, event: UsageEvent) -> None:
        """Count and price one row."""
        self.calls += 1
        self.input_tokens += event.input_tokens
        self.output_tokens += event.output_tokens
        cost = event_cost(book, event)
        model = f"{event.provider}/{event.model}"
        if cost is None:
            self.unpriced.add(model)
            return
        self.dollars += cost
        entry = book.lookup(event.provider, event.model)
        if entry is not None and entry.input_per_million == entry.output_per_million == 0:
            self.free.add(f"{model}: {entry.note or 'zero price'}")

    def line(self, label: str) -> str:
        """One printed line."""
        text = (
            f"{label:<40} {self.calls:>6} calls {self.input_tokens:>9} in "
            f"{self.output_tokens:>8} out  ${self.dollars:.6f}"
        )
        if self.free:
            text += f" (self-hosted, priced at zero: {'; '.join(sorted(self.free))})"
        if self.unpriced:
            text += f" + unpriced: {', '.join(sorted(self.unpriced))}"
        return text


def spend(
    book: PriceBook, events: Iterable[UsageEvent]
) -> tuple[dict[str, Spend], dict[str, Spend], Spend]:
    """``(per agent, per session, total)`` over the rows."""
    agents: dict[str, Spend] = {}
    sessions: dict[str, Spend] = {}
    total = Spend()
    for event in events:
        agents.setdefault(event.agent_id or "(no agent id)", Spend()).add(book, event)
        sessions.setdefault(event.session_id or "(no session id)", Spend()).add(book, event)
        total.add(book, event)
    return agents, sessions, total


def render(book: PriceBook, events: Iterable[UsageEvent]) -> str:
    """The report text."""
    agents, sessions, total = spend(book, events)
    lines = [f"logic_slm spend in USD (prices effective {book.effective_date})", "", "per agent:"]
    lines += [f"  {s.line(name)}" for name, s in sorted(agents.items())]
    lines += ["", "per call (session):"]
    lines += [f"  {s.line(name)}" for name, s in sorted(sessions.items())]
    status = "partial (unpriced models)" if total.unpriced else "complete"
    lines += ["", f"  {total.line('total')}", f"status: {status}"]
    return "\n".join(lines)


def add_parser(sub: Any) -> None:
    """Register ``steward report``."""
    parser = sub.add_parser("report", help="observed logic_slm spend per call and per agent")
    parser.add_argument("--ledger", type=Path, help="usage ledger (default: $STEWARD_LEDGER)")
    parser.add_argument("--prices", type=Path, help="price book (default: shared prices.json)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 2 when the ledger or the price book cannot be read."""
    path: Path = args.ledger or default_ledger_path()
    if not path.is_file():
        print(f"steward report: no usage ledger at {path}", file=sys.stderr)
        return 2
    try:
        book = load_price_book(args.prices)
        ledger = SQLiteLedger(path)
        try:
            events = ledger.events()
        finally:
            ledger.close()
    except (ConfigError, StoreError) as err:
        print(f"steward report: {err}", file=sys.stderr)
        return 2
    print(render(book, events))
    return 0
