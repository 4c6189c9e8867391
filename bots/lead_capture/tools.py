"""Lead capture's tools: setter validators for the lead form (pure) and the hand-over.

Each setter returns ``{"stored": True, "value": …}`` or ``{"error": True, "error_code": …}``.
``set_company_size`` given a headcount returns an inference (``inferred``) as well as the
value: the engine records an inferred slot, which the bot states aloud rather than asks.
"""

from __future__ import annotations

import re
from typing import Any

SIZES = ("1-9", "10-49", "50-249", "250+")
TIMELINES = ("now", "this_quarter", "this_year", "exploring")
BUDGETS = ("under_1k", "1k_5k", "5k_20k", "over_20k")
_BANDS = ((9, "1-9"), (49, "10-49"), (249, "50-249"))
_NONE = frozenset({"none", "nothing", "no tool", "n/a", "nothing yet", "no"})
_EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")


def set_name(name: str) -> dict[str, Any]:
    """Record the caller's name as they said it."""
    text = str(name).strip()
    return {"stored": True, "value": text} if text else {"error": True, "error_code": "empty"}


def set_company_size(size: str | None = None, headcount: int | None = None) -> dict[str, Any]:
    """Record the company size.

    Pass `size` as '1-9', '10-49', '50-249' or '250+' when the caller names a band; pass
    `headcount` as a whole number when they give a number of people ('about thirty' -> 30).
    """
    if headcount is not None:
        band = _band(headcount)
        if band is None:
            return {"error": True, "error_code": "not_a_size"}
        return {"stored": True, "value": band, "inferred": {"company_size": band}}
    text = str(size or "").strip().replace(" ", "")
    return _choice(text, SIZES, "not_a_size")


def _band(headcount: Any) -> str | None:
    try:
        count = int(headcount)
    except (TypeError, ValueError):
        return None
    if count < 1:
        return None
    return next((band for limit, band in _BANDS if count <= limit), "250+")


def set_current_tool(tool: str) -> dict[str, Any]:
    """Record the tool they use today by its name ('Trello', 'spreadsheets'); 'none' if nothing."""
    text = str(tool).strip()
    if not text or text.lower() in _NONE:
        return {"stored": True, "value": "none"}
    return {"stored": True, "value": text}


def set_timeline(timeline: str) -> dict[str, Any]:
    """Record when they want to move: 'now', 'this_quarter', 'this_year' or 'exploring'.

    Map their words onto one of these ('ideally this quarter' -> 'this_quarter').
    """
    return _choice(str(timeline).strip().lower().replace(" ", "_"), TIMELINES, "not_an_option")


def set_budget_band(budget: str) -> dict[str, Any]:
    """Record the monthly budget band: 'under_1k', '1k_5k', '5k_20k' or 'over_20k'."""
    return _choice(str(budget).strip().lower(), BUDGETS, "not_an_option")


def set_email(email: str) -> dict[str, Any]:
    """Record the email address as written ('sanne at example dot com' -> 'sanne@example.com')."""
    text = str(email).strip()
    if _EMAIL.match(text):
        return {"stored": True, "value": text}
    return {"error": True, "error_code": "invalid_email"}


def _choice(value: str, allowed: tuple[str, ...], code: str) -> dict[str, Any]:
    return (
        {"stored": True, "value": value}
        if value in allowed
        else {"error": True, "error_code": code}
    )


def hand_over(**details: Any) -> dict[str, Any]:
    """Backend: pass the lead to a colleague (a fake that accepts every hand-over)."""
    return {"ok": True, "details": details}
