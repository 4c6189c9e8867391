"""Intents: the transactional topics an agent declares (its tools, parameters and messages).

The agent owns the domain: each ``IntentSpec`` names its required parameters (slot names of its
flow), the setter tools that fill them, an optional pre-validation task, the deterministic
confirmation text and the executor. The ``Catalog`` derives the tool vocabulary the runtime
understands: ``start_<intent>``, ``cancel_transaction`` and, while confirming,
``confirm_transaction`` / ``reject_transaction`` / ``correct_transaction``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pipecat_steward.core.slots.compiled import CompiledFlow
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import ConfigError

__all__ = [
    "CANCEL_TOOL",
    "CONFIRMATION_TOOLS",
    "CONFIRM_TOOL",
    "CORRECT_TOOL",
    "REJECT_TOOL",
    "START_PREFIX",
    "Catalog",
    "IntentSpec",
    "intent_from_flow",
]

START_PREFIX = "start_"
CANCEL_TOOL = "cancel_transaction"
CONFIRM_TOOL = "confirm_transaction"
REJECT_TOOL = "reject_transaction"
CORRECT_TOOL = "correct_transaction"
CONFIRMATION_TOOLS = (CONFIRM_TOOL, REJECT_TOOL, CORRECT_TOOL)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FIELD = re.compile(r"{([A-Za-z_][A-Za-z0-9_]*)}")


@dataclass(frozen=True, slots=True)
class IntentSpec:
    """One transactional intent.

    Attributes:
        name: The intent name; the LLM enters it with ``start_<name>``.
        required: Required parameters in asking order (slot names of the intent's flow).
        executor: The tool that performs the transaction.
        confirmation: Confirmation text with ``{parameter}`` fields, e.g.
            ``"Cancel order {order_id}?"``; it is rendered by code, never by the prompt.
        setters: Setter tool → the parameters it sets. Default: ``set_<parameter>`` each.
        pre_validation: A task run once parameters are complete, before confirmation; its
            result's ``eligible`` decides between confirmation and ``OUT_OF_SCOPE``.
        domain: The domain the intent belongs to (``retail_order``): a request for a sibling
            intent of the active one interrupts only when it carries one of the sibling's
            ``cues``; a bare domain keyword ("order") never interrupts a pending parameter.
        cues: Words or phrases that distinguish this intent within its domain (``track``).
    """

    name: str
    required: tuple[str, ...]
    executor: str
    confirmation: str
    setters: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {})
    pre_validation: str | None = None
    domain: str | None = None
    cues: tuple[str, ...] = ()

    @property
    def start_tool(self) -> str:
        """The tool the LLM calls to enter this intent."""
        return f"{START_PREFIX}{self.name}"

    def setter_map(self) -> Mapping[str, tuple[str, ...]]:
        """Setter tool → parameters, with the ``set_<parameter>`` default."""
        return self.setters or {f"set_{p}": (p,) for p in self.required}

    def render_confirmation(self, arguments: Mapping[str, JsonValue]) -> str:
        """The confirmation text with every ``{parameter}`` replaced by its value."""
        return _FIELD.sub(lambda m: _spoken(arguments.get(m.group(1))), self.confirmation)


def _spoken(value: JsonValue) -> str:
    if isinstance(value, list):
        return ", ".join(_spoken(v) for v in value)
    return "" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class Catalog:
    """The agent's intents, with the tool-name lookups routing needs."""

    intents: Mapping[str, IntentSpec]
    start_tools: Mapping[str, str]

    def intent(self, name: str) -> IntentSpec:
        """Return the intent called ``name``.

        Raises:
            ConfigError: When no intent has that name (lists the known ones).
        """
        spec = self.intents.get(name)
        if spec is None:
            known = ", ".join(sorted(self.intents)) or "none"
            raise ConfigError("intents", f"unknown intent {name!r}; known: {known}")
        return spec

    @classmethod
    def of(cls, specs: Iterable[IntentSpec]) -> Catalog:
        """Validate ``specs`` and build the catalog.

        Raises:
            ConfigError: Listing every problem, one ``intents[i]: problem`` per line.
        """
        items = tuple(specs)
        errors = [e for i, s in enumerate(items) for e in _check(i, s)]
        names = [s.name for s in items]
        errors += [
            f"intents: {n!r} is declared twice" for n in sorted(set(names)) if names.count(n) > 1
        ]
        if errors:
            raise ConfigError("", "\n".join(errors))
        by_name = MappingProxyType({s.name: s for s in items})
        starts = MappingProxyType({s.start_tool: s.name for s in items})
        return cls(by_name, starts)


def _check(index: int, spec: IntentSpec) -> list[str]:
    at = f"intents[{index}]"
    errors: list[str] = []
    if not _NAME.match(spec.name):
        errors.append(f"{at}.name: {spec.name!r} is not an identifier; use letters, digits, _")
    if not spec.required:
        errors.append(f"{at}.required: empty; name the parameters the executor needs")
    if not spec.executor:
        errors.append(f"{at}.executor: empty; name the tool that performs the transaction")
    unknown = sorted(set(_FIELD.findall(spec.confirmation)) - set(spec.required))
    if unknown:
        errors.append(
            f"{at}.confirmation: unknown field(s) {', '.join(unknown)}; "
            f"use required parameters: {', '.join(spec.required)}"
        )
    for tool, params in spec.setter_map().items():
        stray = sorted(set(params) - set(spec.required))
        if stray:
            errors.append(f"{at}.setters.{tool}: sets non-parameters {', '.join(stray)}")
    return errors


def intent_from_flow(
    name: str,
    flow: CompiledFlow,
    *,
    confirmation: str,
    pre_validation: str | None = None,
    domain: str | None = None,
    cues: Iterable[str] = (),
) -> IntentSpec:
    """Derive an intent from a slot-filling flow whose terminal task is the transaction.

    The terminal task's tool is the executor, its user-slot inputs are the required parameters
    and the flow's setters of those slots are the intent's setters.

    Raises:
        ConfigError: When the flow has no terminal task (say which to mark ``terminal: true``).
    """
    terminal = [t for t in flow.tasks if t.config.terminal]
    if len(terminal) != 1:
        raise ConfigError(
            f"intents.{name}",
            "the flow needs exactly one task with `terminal: true` (the executor)",
        )
    task = terminal[0].config
    required = tuple(i for i in task.inputs if i in flow.user_slots)
    setters = {
        tool: tuple(slot for _, slot in members if slot in required)
        for tool, members in flow.setters.items()
    }
    setters = {tool: params for tool, params in setters.items() if params}
    return IntentSpec(
        name, required, task.tool, confirmation, setters, pre_validation, domain, tuple(cues)
    )
