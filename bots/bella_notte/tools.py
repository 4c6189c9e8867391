"""Bella Notte's tools: setter validators (pure: args in, value or errors out) and fake backends."""

from __future__ import annotations

import datetime as dt
from typing import Any

TODAY = dt.date(2026, 7, 1)  # the demo's fixed "today", so runs are reproducible


def set_reservation_basics(
    party_size: int | None = None, preferred_date: str | None = None
) -> dict[str, Any]:
    """Record the party size and/or the preferred date (YYYY-MM-DD).

    Convert natural language ('this Friday', 'July 4th') to YYYY-MM-DD.
    """
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if party_size is not None:
        try:
            count = int(party_size)
        except (TypeError, ValueError):
            errors["party_size"] = "parse_error"
        else:
            if 1 <= count <= 8:
                values["party_size"] = count
            else:
                errors["party_size"] = "out_of_range"
    if preferred_date is not None:
        code = _date_error(preferred_date)
        if code:
            errors["preferred_date"] = code
        else:
            values["preferred_date"] = preferred_date
    return {"stored": bool(values), "values": values, "field_errors": errors}


def _date_error(text: str) -> str | None:
    try:
        day = dt.date.fromisoformat(str(text).strip())
    except ValueError:
        return "invalid_format"
    return "past_date" if day < TODAY else None


def set_contact_phone(phone: str) -> dict[str, Any]:
    """Record a contact phone number, digits and dashes."""
    digits = [c for c in str(phone) if c.isdigit()]
    return (
        {"stored": True, "value": str(phone)}
        if len(digits) >= 7
        else {"error": True, "error_code": "invalid"}
    )


def set_selected_time(time: str) -> dict[str, Any]:
    """Record the chosen time as HH:MM (24h)."""
    return {"stored": True, "value": str(time).strip()}


def set_guest_info(
    guest_name: str | None = None, special_requests: str | None = None
) -> dict[str, Any]:
    """Record the reservation name and/or special requests ('none' when there are none)."""
    values = {
        k: v
        for k, v in {"guest_name": guest_name, "special_requests": special_requests}.items()
        if v is not None
    }
    return {"stored": True, "values": values}


def find_available_times(party_size: int, preferred_date: str) -> dict[str, Any]:
    """Backend: open times for a party on a date (fully booked on Mondays)."""
    if dt.date.fromisoformat(preferred_date).weekday() == 0:
        return {"success": False, "reason": "fully booked"}
    return {"success": True, "available_times": "18:00, 19:30, 21:00"}


def book_reservation(**details: Any) -> dict[str, Any]:
    """Backend: book the table and return a confirmation number."""
    checksum = sum(ord(c) for c in f"{details['guest_name']}{details['preferred_date']}")
    return {"success": True, "confirmation": f"BN-{checksum % 9000 + 1000}"}


def escalate() -> dict[str, Any]:
    return {"ok": True}


def end_session(**_: Any) -> dict[str, Any]:
    return {"ok": True}


def transfer_to_agent(**_: Any) -> dict[str, Any]:
    return {"ok": True}
