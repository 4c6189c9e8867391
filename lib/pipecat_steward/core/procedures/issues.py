"""Problems found while compiling or validating procedures, each with its config path."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Issue", "IssueCode", "IssueSeverity"]


class IssueSeverity(StrEnum):
    """Whether publishing must stop (``error``) or the author should look (``warning``)."""

    ERROR = "error"
    WARNING = "warning"


class IssueCode(StrEnum):
    """Every problem the compiler and publish validation report."""

    # scanner (the prompt's inline blocks)
    UNCLOSED_STEP = "unclosed_step"
    UNCLOSED_PROCEDURE = "unclosed_procedure"
    STRAY_CLOSE = "stray_close"
    NESTED_STEP = "nested_step"
    NESTED_PROCEDURE = "nested_procedure"
    BAD_NAME = "bad_name"
    UNKNOWN_REFERENCE = "unknown_reference"
    # cross-references
    DUPLICATE_STEP = "duplicate_step"
    DUPLICATE_GROUP = "duplicate_group"
    UNKNOWN_STEP = "unknown_step"
    REQUIRES_CYCLE = "requires_cycle"
    IRREVERSIBLE_WITHOUT_TOOL = "irreversible_without_tool"
    GATE_WITHOUT_PREREQUISITES = "gate_without_prerequisites"
    UNKNOWN_TOOL = "unknown_tool"
    JUDGE_WITH_MONITOR_DISABLED = "judge_with_monitor_disabled"
    EXTRACTION_WITHOUT_DESCRIPTION = "extraction_without_description"
    LINKED_WRITE = "linked_write"
    EMPTY_PROCEDURE = "empty_procedure"
    NO_LOGIC_SLM = "no_logic_slm"
    INVALID_CONFIG = "invalid_config"
    # transactions
    EXECUTOR_NOT_IDEMPOTENT = "executor_not_idempotent"


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem: where it is, what it is and how to fix it.

    Attributes:
        severity: ``error`` blocks publishing; ``warning`` does not.
        code: The closed problem vocabulary.
        path: The config path, e.g. ``procedure.steps[2].requires`` or
            ``prompt#step:take_payment`` for a step defined only by its inline block.
        message: What is wrong and the fix.
    """

    severity: IssueSeverity
    code: IssueCode
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message} [{self.code}]"
