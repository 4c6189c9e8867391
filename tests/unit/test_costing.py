"""The pure costing core: price book, call cost, forecast (partial, self-hosted zero)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from pipecat_steward.core.costing import (
    ForecastAssumptions,
    PriceBook,
    UsageEvent,
    call_cost,
    event_cost,
    forecast,
)

BOOK = PriceBook.model_validate(
    {
        "effective_date": "2026-09-03",
        "prices": [
            {
                "provider": "openai",
                "model": "gpt-4o-mini",
                "input_per_million": "0.15",
                "output_per_million": "0.60",
            },
            {
                "provider": "openai_compatible",
                "model": "*",
                "input_per_million": "0",
                "output_per_million": "0",
                "note": "self-hosted: explicit zero",
            },
        ],
    }
)
GPT = ("openai", "gpt-4o-mini")


def test_call_cost_is_exact_decimal() -> None:
    """350 in / 40 out on gpt-4o-mini is exactly $0.0000765; 1,000 calls $0.0765."""
    cost = call_cost(BOOK, *GPT, (350, 40))
    assert cost.per_call == Decimal("0.0000765")
    assert cost.per_thousand_calls == Decimal("0.0765")


def test_unpriced_model_is_none_not_zero() -> None:
    """A model missing from the book has no price, not a zero one."""
    cost = call_cost(BOOK, "bedrock", "amazon.nova-micro-v1:0", (350, 40))
    assert cost.per_call is None and cost.per_thousand_calls is None


def test_wildcard_entry_prices_self_hosted_at_an_explicit_zero_with_a_note() -> None:
    """openai_compatible/* is zero and says why."""
    cost = call_cost(BOOK, "openai_compatible", "Qwen/Qwen2.5-7B-Instruct", (350, 40))
    assert cost.per_call == Decimal(0)
    assert "self-hosted" in cost.note


def test_event_cost() -> None:
    """An observed usage row is priced the same way."""
    event = UsageEvent(
        provider="openai",
        model="gpt-4o-mini",
        input_tokens=1_000_000,
        output_tokens=0,
        latency_ms=1.0,
        scope="extraction",
    )
    assert event_cost(BOOK, event) == Decimal("0.15")
    assert event.stage_id == "__logic_slm"


def test_forecast_defaults_follow_the_seed() -> None:
    """Extraction ≈ 350/40 per turn; adherence 0.3/0.5/0.8 checks of ≈ 600/60."""
    result = forecast(BOOK, {"extraction": GPT, "adherence": GPT}, ForecastAssumptions(), 10)
    assert result.status == "complete" and not result.gaps
    extraction = Decimal("0.0000765")
    adherence = (600 * Decimal("0.15") + 60 * Decimal("0.60")) / 1_000_000
    assert result.per_turn("low") == extraction + Decimal("0.3") * adherence
    assert result.per_turn("mid") == extraction + Decimal("0.5") * adherence
    assert result.per_turn("high") == extraction + Decimal("0.8") * adherence
    assert result.per_conversation("mid") == 10 * result.per_turn("mid")


def test_forecast_with_an_unpriced_model_is_partial_and_names_the_gap() -> None:
    """The gap is named; the known part is still summed; nothing is silently zero."""
    models = {"extraction": GPT, "adherence": ("bedrock", "amazon.nova-micro-v1:0")}
    result = forecast(BOOK, models, ForecastAssumptions(), 5)
    assert result.status == "partial"
    (gap,) = result.gaps
    assert "bedrock/amazon.nova-micro-v1:0" in gap and "adherence" in gap and "2026-09-03" in gap
    adherence = next(line for line in result.lines if line.scope == "adherence")
    assert adherence.per_turn("mid") is None
    assert result.per_turn("mid") == Decimal("0.0000765")


def test_judge_is_priced_per_call_only() -> None:
    """The judge runs per gated tool call, so it adds nothing per turn."""
    result = forecast(BOOK, {"llm_judge": GPT}, ForecastAssumptions(), 3)
    (line,) = result.lines
    assert line.cost.per_call is not None
    assert line.per_turn("high") is None and result.per_turn("high") == 0


def test_self_hosted_forecast_carries_the_note() -> None:
    """A self-hosted stage forecasts to zero, with the reason visible."""
    result = forecast(
        BOOK, {"extraction": ("openai_compatible", "smollm2")}, ForecastAssumptions(), 10
    )
    assert result.status == "complete"
    assert result.per_conversation("high") == 0
    assert result.notes == ("self-hosted: explicit zero",)


def test_price_book_rejects_bad_data() -> None:
    """Negative prices and undated books do not load."""
    with pytest.raises(ValidationError):
        PriceBook.model_validate(
            {
                "effective_date": "2026-09-03",
                "prices": [
                    {
                        "provider": "x",
                        "model": "y",
                        "input_per_million": "-1",
                        "output_per_million": "0",
                    }
                ],
            }
        )
    with pytest.raises(ValidationError):
        PriceBook.model_validate({"effective_date": "soon", "prices": []})


def test_core_costing_imports_no_io() -> None:
    """core.costing stays pure: importing it pulls in no SDK, HTTP client or storage."""
    import subprocess
    import sys

    code = (
        "import sys, pipecat_steward.core.costing\n"
        "bad = [m for m in ('openai', 'httpx', 'httpx2', 'aiohttp', 'boto3', 'sqlite3',"
        " 'pipecat_steward.slm', 'pipecat_steward.storage') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
