"""Whether a tool result is the success a tool step waits for (its ``result_path``).

Generic success excludes the statuses that mean "not done yet" or "not done at all":
``authorization_required``, ``requires_action``, ``capture_started``, ``setup_required``,
pending and error statuses, an ``error`` field and an explicit ``success: false``. A step that
starts an operation lists the statuses it accepts in ``result_statuses`` instead; errors and
refusals still never count. A ``result_path`` must then select a non-empty value, so an
HTTP-successful empty search is :attr:`ToolOutcome.EMPTY`, not a success.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import cast

from pipecat_steward.core.procedures.jsonpath import is_nonempty, parse_path, select
from pipecat_steward.core.words import word_set

__all__ = ["NOT_SUCCESS_STATUSES", "ToolOutcome", "classify_result", "result_mapping"]


class ToolOutcome(StrEnum):
    """What a tool result means for a tool step."""

    SUCCEEDED = "succeeded"
    EMPTY = "empty"  # successful call, but the required value is missing or empty
    FAILED = "failed"


NOT_SUCCESS_STATUSES = word_set(
    "authorization_required requires_action capture_started setup_required consent_required "
    "pending in_progress processing queued waiting error failed failure denied rejected "
    "refused refusal declined cancelled canceled timeout timed_out not_found blocked vetoed"
)
_ERROR_STATUSES = frozenset(
    {
        "error",
        "failed",
        "failure",
        "denied",
        "rejected",
        "refused",
        "refusal",
        "declined",
        "blocked",
        "vetoed",
    }
)


def result_mapping(result: object) -> Mapping[str, object] | None:
    """Return the result as a mapping when it is one (or JSON text of one)."""
    if isinstance(result, str) and result.lstrip().startswith("{"):
        try:
            result = json.loads(result)
        except ValueError:
            return None
    if isinstance(result, Mapping):
        return cast(Mapping[str, object], result)
    return None


def classify_result(
    result: object,
    result_statuses: tuple[str, ...] | None = None,
    result_path: str | None = None,
) -> ToolOutcome:
    """Classify one tool result against a step's criterion.

    Args:
        result: The tool's result (a mapping, JSON text, or any other value).
        result_statuses: Statuses that count as success instead of the generic rule.
        result_path: A path whose value must exist and be non-empty.

    Returns:
        ``SUCCEEDED``, ``EMPTY`` (succeeded without the required value) or ``FAILED``.
    """
    data = result_mapping(result)
    if not _succeeded(result, data, result_statuses):
        return ToolOutcome.FAILED
    if result_path is None:
        return ToolOutcome.SUCCEEDED
    document = data if data is not None else result
    found = select(document, parse_path(result_path))
    return ToolOutcome.SUCCEEDED if is_nonempty(found) else ToolOutcome.EMPTY


def _succeeded(
    result: object, data: Mapping[str, object] | None, accepted: tuple[str, ...] | None
) -> bool:
    if data is None:
        return accepted is None and result is not False
    if data.get("success") is False or _is_error(data.get("error")):
        return False
    status = _status(data)
    if accepted is not None:
        wanted = {s.lower() for s in accepted}
        return status is not None and status in wanted and status not in _ERROR_STATUSES
    return status not in NOT_SUCCESS_STATUSES


def _status(data: Mapping[str, object]) -> str | None:
    value = data.get("status")
    return value.strip().lower() if isinstance(value, str) else None


def _is_error(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return is_nonempty(value)
