"""Problems found while compiling or validating procedures, each with its config path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipecat_steward.core.procedures.blocks import WarningCode

__all__ = ["Issue", "IssueCode", "IssueSeverity"]


IssueSeverity = Literal["error", "warning"]
"""Whether publishing must stop (``error``) or the author should look (``warning``)."""

IssueCode = Literal[
    # found by the scanner of the prompt's inline blocks: unclosed, stray or nested markers,
    # bad names, unknown references, duplicate steps and groups
    WarningCode,
    # cross-references
    "unknown_step",
    "requires_cycle",
    "irreversible_without_tool",
    "gate_without_prerequisites",
    "unknown_tool",
    "judge_with_monitor_disabled",
    "extraction_without_description",
    "linked_write",
    "empty_procedure",
    "no_logic_slm",
    "invalid_config",
    # transactions
    "executor_not_idempotent",
]
"""Every problem the compiler and publish validation report."""


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
