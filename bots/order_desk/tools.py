"""Order desk backends: plain functions. Executors honour the idempotency key: a key
they have already seen is a replay and returns the recorded outcome without acting again.

The backend's ledger of effects lives in memory, or in the JSON file named by
``STEWARD_ORDER_DESK_LEDGER`` so a crash test can count effects across processes. That file is
one record shared by every worker process, so each load-modify-store holds an exclusive lock
(a lost update would forget an outcome and let a replay act again).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipecat_steward.runtime.transactions import idempotent

SHIPPED = {"PED-2002"}
_MEMORY: dict[str, Any] = {"effects": [], "outcomes": {}, "attempts": []}
_THREADS = threading.Lock()  # sync tools run in worker threads of one process too


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Hold the ledger exclusively: this process's threads and every other process."""
    path = os.environ.get("STEWARD_ORDER_DESK_LEDGER")
    with _THREADS:
        if not path:
            yield
            return
        with open(f"{path}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _load() -> dict[str, Any]:
    path = os.environ.get("STEWARD_ORDER_DESK_LEDGER")
    if not path or not Path(path).exists():
        return _MEMORY if not path else {"effects": [], "outcomes": {}}
    return json.loads(Path(path).read_text())


def _store(ledger: dict[str, Any]) -> None:
    path = os.environ.get("STEWARD_ORDER_DESK_LEDGER")
    if path:
        tmp = Path(f"{path}.tmp")
        tmp.write_text(json.dumps(ledger))
        os.replace(tmp, path)


def _latency() -> None:
    # Simulated backend latency (crash tests set it so kills land inside a call).
    delay = float(os.environ.get("STEWARD_ORDER_DESK_LATENCY", "0") or 0)
    if delay:
        time.sleep(delay)


def _once(name: str, key: str, effect: dict[str, Any]) -> dict[str, Any]:
    """Act once per idempotency key; a replay returns the recorded outcome."""
    _latency()
    with _locked():
        ledger = _load()
        ledger.setdefault("attempts", []).append(key)
        if key in ledger["outcomes"]:
            _store(ledger)
            return ledger["outcomes"][key]
        ledger["effects"].append({"tool": name, "key": key})
        ledger["outcomes"][key] = effect
        _store(ledger)
    _latency()
    return effect


def set_order_id(order_id: str) -> dict[str, Any]:
    """Record the order number, e.g. PED-1001 (letters, a dash, digits)."""
    text = str(order_id).strip().upper().replace(" ", "-")
    if not text.startswith("PED-") or not text[4:].isdigit():
        return {"error": True, "error_code": "invalid_order_id"}
    return {"stored": True, "value": text}


def set_amount(amount: str) -> dict[str, Any]:
    """Record the amount as the caller said it, currency included (e.g. R$ 71.99)."""
    return {"stored": True, "value": str(amount).strip()}


def check_cancellable(order_id: str) -> dict[str, Any]:
    """Pre-validation: an order that has shipped cannot be cancelled here."""
    return {"success": True, "eligible": order_id not in SHIPPED}


@idempotent
def cancel_order(order_id: str, idempotency_key: str) -> dict[str, Any]:
    """Cancel the order (once per key)."""
    refund = f"RF-{sum(map(ord, order_id)) % 9000 + 1000}"
    return _once("cancel_order", idempotency_key, {"success": True, "refund_id": refund})


def track_order(order_id: str, idempotency_key: str) -> dict[str, Any]:
    """Look the order up (read-only; the key is accepted for uniformity)."""
    return {
        "success": True,
        "order_status": "out for delivery" if order_id.endswith("1") else "being packed",
    }


@idempotent
def contest_charge(subject: str, amount: str, idempotency_key: str) -> dict[str, Any]:
    """Open a contestation (once per key)."""
    case = f"CT-{sum(map(ord, subject + amount)) % 9000 + 1000}"
    return _once("contest_charge", idempotency_key, {"success": True, "case_id": case})


@idempotent
def send_statement(period: str, idempotency_key: str) -> dict[str, Any]:
    """Email the latest statement (once per key)."""
    return _once("send_statement", idempotency_key, {"success": True})


def effects() -> list[dict[str, Any]]:
    """The backend's side effects so far (for tests)."""
    with _locked():
        return list(_load()["effects"])
