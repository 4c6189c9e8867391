"""Usage events, the dated price book and the logic_slm cost forecast.

Pure: the caller passes parsed JSON and timestamps in; nothing here reads a file or a clock.
Money is :class:`~decimal.Decimal` end to end, so a forecast of fractions of a cent stays
exact. A model missing from the price book is never priced at zero: the forecast turns
``partial`` and names the gap. A self-hosted endpoint is priced by an explicit zero entry that
carries a note, so "free because we host it" is a visible statement, not an omission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LOGIC_SLM_STAGE_ID",
    "CallCost",
    "Forecast",
    "ForecastAssumptions",
    "ForecastLine",
    "PriceBook",
    "PriceEntry",
    "Scope",
    "UsageEvent",
    "UsageOutcome",
    "call_cost",
    "event_cost",
    "forecast",
]

LOGIC_SLM_STAGE_ID = "__logic_slm"
"""The stage id every logic_slm usage row carries (never folded into the primary LLM's rows)."""

Scope = Literal["adherence", "extraction", "llm_judge", "derive"]
"""Which consumer made a logic_slm call (``derive`` is ``steward derive``, at authoring time)."""

UsageOutcome = Literal["ok", "timeout", "transport_error", "output_error", "cancelled"]
"""How a metered call ended; failed calls are metered too so outages show in the ledger."""

_MILLION = Decimal(1_000_000)
_THOUSAND = Decimal(1_000)
Level = Literal["low", "mid", "high"]
_LEVELS: Sequence[Level] = ("low", "mid", "high")


@dataclass(frozen=True, kw_only=True)
class UsageEvent:
    """One metered logic_slm call: the row the usage ledger stores."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: float
    scope: Scope
    outcome: UsageOutcome = "ok"
    stage_id: str = LOGIC_SLM_STAGE_ID
    tenant_id: str = ""
    agent_id: str = ""
    session_id: str = ""
    at: str = ""
    """ISO-8601 time of the call, supplied by the caller's clock."""


class PriceEntry(BaseModel):
    """The price of one provider/model pair, in currency units per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str = Field(description="Model id, or '*' for every model of the provider.")
    input_per_million: Decimal = Field(ge=0)
    output_per_million: Decimal = Field(ge=0)
    note: str = ""
    """Why the price is what it is; required in spirit for zero prices (self-hosted)."""


class PriceBook(BaseModel):
    """A dated list of prices. Parse it with ``PriceBook.model_validate(json_data)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    effective_date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    currency: Literal["USD"] = "USD"
    source: str = ""
    """Where the prices were read, so a reader knows how far to trust them."""
    prices: tuple[PriceEntry, ...]

    def lookup(self, provider: str, model: str) -> PriceEntry | None:
        """Return the exact entry for ``provider``/``model``, else the provider's ``*`` entry."""
        exact = [p for p in self.prices if p.provider == provider and p.model == model]
        if exact:
            return exact[0]
        wildcard = [p for p in self.prices if p.provider == provider and p.model == "*"]
        return wildcard[0] if wildcard else None


@dataclass(frozen=True, kw_only=True)
class CallCost:
    """The cost of one call of a given token shape, or ``None`` when the model is unpriced."""

    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    per_call: Decimal | None
    note: str = ""

    @property
    def per_thousand_calls(self) -> Decimal | None:
        """Return the cost of 1,000 such calls (``None`` when unpriced)."""
        return None if self.per_call is None else self.per_call * _THOUSAND


def call_cost(book: PriceBook, provider: str, model: str, tokens: tuple[int, int]) -> CallCost:
    """Price one call of ``(input, output)`` tokens against the book."""
    entry = book.lookup(provider, model)
    per_call = None
    if entry is not None:
        per_call = (
            Decimal(tokens[0]) * entry.input_per_million
            + Decimal(tokens[1]) * entry.output_per_million
        ) / _MILLION
    note = entry.note if entry is not None else ""
    return CallCost(
        provider=provider,
        model=model,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        per_call=per_call,
        note=note,
    )


def event_cost(book: PriceBook, event: UsageEvent) -> Decimal | None:
    """Price an observed usage row; ``None`` when its model is not in the book."""
    tokens = (event.input_tokens, event.output_tokens)
    return call_cost(book, event.provider, event.model, tokens).per_call


class ForecastAssumptions(BaseModel):
    """Per-turn assumptions of the logic_slm cost and latency forecast."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    extraction_input_tokens_per_turn: int = Field(default=350, ge=0)
    extraction_output_tokens_per_turn: int = Field(default=40, ge=0)
    extraction_calls_per_turn: Decimal = Field(default=Decimal(1), ge=0)
    adherence_checks_per_turn: Mapping[Level, Decimal] = Field(
        default_factory=lambda: {
            "low": Decimal("0.3"),
            "mid": Decimal("0.5"),
            "high": Decimal("0.8"),
        }
    )
    adherence_input_tokens_per_check: int = Field(default=600, ge=0)
    adherence_output_tokens_per_check: int = Field(default=60, ge=0)
    judge_input_tokens_per_call: int = Field(default=400, ge=0)
    judge_output_tokens_per_call: int = Field(default=10, ge=0)


@dataclass(frozen=True, kw_only=True)
class ForecastLine:
    """One consumer's share of the forecast."""

    scope: Scope
    cost: CallCost
    calls_per_turn: Mapping[Level, Decimal]
    """Expected calls per caller turn at each level (judge calls are per gate, so empty)."""

    def per_turn(self, level: Level) -> Decimal | None:
        """Return the expected cost per turn at ``level`` (``None``: unpriced or not per-turn)."""
        calls = self.calls_per_turn.get(level)
        if calls is None or self.cost.per_call is None:
            return None
        return calls * self.cost.per_call


@dataclass(frozen=True, kw_only=True)
class Forecast:
    """A forecast over every consumer; ``partial`` when any model is unpriced."""

    price_book_date: str
    currency: str
    turns: int
    lines: tuple[ForecastLine, ...]
    gaps: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    @property
    def status(self) -> Literal["complete", "partial"]:
        """``partial`` when a gap leaves part of the cost unknown."""
        return "partial" if self.gaps else "complete"

    def per_turn(self, level: Level) -> Decimal:
        """Return the sum of the known per-turn costs at ``level`` (read with :attr:`status`)."""
        known = (line.per_turn(level) for line in self.lines)
        return sum((cost for cost in known if cost is not None), Decimal(0))

    def per_conversation(self, level: Level) -> Decimal:
        """Return the known cost of a conversation of :attr:`turns` caller turns at ``level``."""
        return self.per_turn(level) * self.turns


def forecast(
    book: PriceBook,
    models: Mapping[Scope, tuple[str, str]],
    assumptions: ForecastAssumptions,
    turns: int,
) -> Forecast:
    """Forecast logic_slm cost for the consumers in ``models``.

    Args:
        book: The dated price book.
        models: ``(provider, model)`` per scope, as the ladder resolved them.
        assumptions: Tokens and calls per turn.
        turns: Caller turns in one conversation.

    Returns:
        The forecast; its ``gaps`` name every unpriced provider/model, never pricing it at zero.

    """
    lines = tuple(_line(book, scope, pm, assumptions) for scope, pm in sorted(models.items()))
    gaps = tuple(
        f"no price for {line.cost.provider}/{line.cost.model} ({line.scope}) "
        f"in the price book of {book.effective_date}"
        for line in lines
        if line.cost.per_call is None
    )
    notes = tuple(sorted({line.cost.note for line in lines if line.cost.note}))
    return Forecast(
        price_book_date=book.effective_date,
        currency=book.currency,
        turns=turns,
        lines=lines,
        gaps=gaps,
        notes=notes,
    )


def _line(
    book: PriceBook, scope: Scope, pm: tuple[str, str], a: ForecastAssumptions
) -> ForecastLine:
    """Build one consumer's line from its token shape and calls per turn."""
    if scope == "extraction":
        tokens = (a.extraction_input_tokens_per_turn, a.extraction_output_tokens_per_turn)
        calls: Mapping[Level, Decimal] = dict.fromkeys(_LEVELS, a.extraction_calls_per_turn)
    elif scope == "adherence":
        tokens = (a.adherence_input_tokens_per_check, a.adherence_output_tokens_per_check)
        calls = dict(a.adherence_checks_per_turn)
    else:
        tokens = (a.judge_input_tokens_per_call, a.judge_output_tokens_per_call)
        calls = {}
    return ForecastLine(scope=scope, cost=call_cost(book, *pm, tokens), calls_per_turn=calls)
