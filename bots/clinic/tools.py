"""Riverside Clinic's fake backends: plain functions with FHIR-like results, no network."""

from __future__ import annotations

from typing import Any

PATIENTS = {("ada lovelace", "1990-12-10"): "pat-1815"}
APPOINTMENTS = {"pat-1815": {"id": "appt-42", "when": "2026-07-14T09:30", "with": "Dr. Byron"}}


def authenticate_patient(name: str, date_of_birth: str) -> dict[str, Any]:
    """Send the caller a verification link; the platform marks them verified when they tap it."""
    return {"status": "pending", "message": f"verification link sent for {name}"}


def find_patient(name: str, date_of_birth: str) -> dict[str, Any]:
    """Search the patient index; an unknown patient is an HTTP-successful empty bundle."""
    patient = PATIENTS.get((name.strip().lower(), date_of_birth.strip()))
    entries = [{"resource": {"resourceType": "Patient", "id": patient}}] if patient else []
    return {"status": 200, "data": {"resourceType": "Bundle", "total": len(entries), "entry": entries}}


def show_appointment(patient_id: str, component: str = "AppointmentSummary") -> dict[str, Any]:
    """Render the patient's next appointment as a card."""
    appointment = APPOINTMENTS.get(patient_id)
    if appointment is None:
        return {"status": "error", "error": "no upcoming appointment"}
    return {"status": "rendered", "component": component, "appointment": appointment}


def attach_patient_headshot(patient_id: str) -> dict[str, Any]:
    """Open the camera widget; the photo arrives later (an accepted request)."""
    return {"status": "capture_started", "patient_id": patient_id}


def request_copay_review(patient_id: str, amount: float) -> dict[str, Any]:
    """Ask billing to approve a large copay."""
    return {"status": "approved", "patient_id": patient_id, "amount": amount}


def collect_payment(patient_id: str, amount: float) -> dict[str, Any]:
    """Charge the copay (irreversible)."""
    return {"status": "succeeded", "receipt": f"rcpt-{patient_id}-{amount:.2f}"}


def send_visit_summary(patient_id: str) -> dict[str, Any]:
    """Email the visit summary."""
    return {"status": "sent", "patient_id": patient_id}
