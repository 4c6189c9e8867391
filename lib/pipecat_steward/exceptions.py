"""Errors raised by pipecat-steward.

Every error the library raises on purpose derives from ``StewardError``::

    StewardError
    ├── ConfigError            an agent config, expression or manifest is invalid (names the path)
    │   └── ExpressionError    a condition does not parse or names an unknown function (column too)
    ├── StateError             a session state cannot be used (bad JSON, unknown slot, wrong phase)
    │   └── CoercionError      a value cannot be coerced to its variable's declared type
    ├── ToolError              a tool call the steward routes is malformed or not valid now
    ├── StoreError             a checkpoint or ledger backend failed
    │   └── ConflictError      a stale writer tried to save over a newer checkpoint version
    └── SLMError               a logic_slm call failed (the client never raises anything else)
        ├── SLMResolutionError no logic_slm stage could be resolved from the ladder
        ├── SLMTimeoutError    the call exceeded its hard timeout
        ├── SLMTransportError  the provider answered with an error or could not be reached
        └── SLMOutputError     the provider's output is not valid JSON for the requested schema

Config errors carry the config path of the offending value (``slots[3].requires``) and a
hint that says how to fix it, so a message reads like
``slots[3].requires: unknown slot 'date_x'; known: date, party_size``.
"""

from __future__ import annotations

__all__ = [
    "CoercionError",
    "ConfigError",
    "ConflictError",
    "ExpressionError",
    "SLMError",
    "SLMOutputError",
    "SLMResolutionError",
    "SLMTimeoutError",
    "SLMTransportError",
    "StateError",
    "StewardError",
    "StoreError",
    "ToolError",
]


class StewardError(Exception):
    """Base of every error pipecat-steward raises on purpose."""


class ConfigError(StewardError):
    """An agent configuration is invalid.

    Attributes:
        path: Where in the config the problem is, e.g. ``slots[3].requires``.
        problem: What is wrong and how to fix it.
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


class ExpressionError(ConfigError):
    """A condition expression does not parse or cannot be evaluated.

    Attributes:
        expression: The expression text.
        column: 1-based column of the offending character (0 when unknown).
    """

    def __init__(self, problem: str, expression: str, column: int = 0, path: str = "") -> None:
        self.expression = expression
        self.column = column
        where = f" at column {column}" if column else ""
        super().__init__(path, f"{problem}{where} in {expression!r}")

    def at(self, path: str) -> ExpressionError:
        """Return the same error located at a config path."""
        problem = self.problem.split(" at column ")[0].split(" in '")[0]
        return ExpressionError(problem, self.expression, self.column, path)


class StateError(StewardError):
    """A session state is malformed or an operation does not fit it."""


class CoercionError(StateError):
    """A value cannot be coerced to its variable's declared type."""


class ToolError(StewardError):
    """A tool call routed by the steward is malformed or not valid right now."""


class StoreError(StewardError):
    """A checkpoint store or usage ledger backend failed."""


class ConflictError(StoreError):
    """A save was attempted with a stale version (optimistic concurrency)."""


class SLMError(StewardError):
    """A logic_slm call failed. The structured-output client raises only this family."""


class SLMResolutionError(SLMError):
    """No logic_slm stage could be resolved; the message names what is missing."""


class SLMTimeoutError(SLMError):
    """A logic_slm call exceeded its hard timeout."""


class SLMTransportError(SLMError):
    """The provider answered with an error status or could not be reached."""


class SLMOutputError(SLMError):
    """The provider's output is not valid JSON for the requested schema."""
