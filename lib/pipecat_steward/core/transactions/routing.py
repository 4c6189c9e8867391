"""Routing precedence while a transaction collects, as code.

``route_turn`` reads what happened in one caller turn — the tool calls the LLM made (setters of
the active intent's parameters, ``cancel_transaction``, ``start_<intent>``) and, when an
extractor runs, its proposals — and returns one small decision:

1. a value for a pending parameter → ``Fill`` (continue the transaction);
2. an explicit cancel → ``Cancel`` (optionally routing to the intent asked for with it);
3. an unambiguous new intent → ``InterruptAndRoute`` (the old transaction stays resumable);
4. a same-domain generic keyword → ``StayAndIgnoreKeyword`` (do not interrupt);
5. anything else → ``Clarify`` (keep the transaction, ask again).

When idle, ``start_<intent>`` gives ``Start`` and nothing gives ``Idle``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pipecat_steward.core.transactions.intents import CANCEL_TOOL, Catalog, IntentSpec
from pipecat_steward.core.transactions.model import (
    TransactionState,
    TransactionStatus,
    require_consistent,
)
from pipecat_steward.core.variables import JsonValue
from pipecat_steward.exceptions import StateError

__all__ = [
    "Cancel",
    "Clarify",
    "ClarifyReason",
    "Fill",
    "Idle",
    "InterruptAndRoute",
    "RouteDecision",
    "Start",
    "StayAndIgnoreKeyword",
    "ToolUse",
    "TurnInputs",
    "route_turn",
    "setter_values",
]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call the LLM made this turn (after the setter's validator, for setters)."""

    name: str
    args: Mapping[str, JsonValue] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class TurnInputs:
    """Everything routing may read about one caller turn.

    Attributes:
        calls: The LLM's tool calls this turn, in order.
        proposals: Extractor proposals, parameter → value (only fill missing parameters).
        text: The caller's words; the cue check reads a start call's ``quote`` or this.
    """

    calls: Sequence[ToolUse] = ()
    proposals: Mapping[str, JsonValue] = field(default_factory=lambda: {})
    text: str = ""


@dataclass(frozen=True, slots=True)
class Fill:
    """Continue the transaction, merging ``values`` (rule 1, or a correction by a setter)."""

    values: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class Cancel:
    """The caller abandons the transaction (rule 2); ``then_start`` is an intent asked with it."""

    then_start: str | None = None


@dataclass(frozen=True, slots=True)
class InterruptAndRoute:
    """Switch to ``intent`` (rule 3); the ``interrupted`` intent's transaction stays resumable."""

    intent: str
    interrupted: str
    arguments: Mapping[str, JsonValue] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class StayAndIgnoreKeyword:
    """A same-domain keyword asked for ``ignored``; keep collecting (rule 4)."""

    ignored: str


ClarifyReason = Literal["no_answer", "competing_intents"]


@dataclass(frozen=True, slots=True)
class Clarify:
    """Keep the transaction and ask again for ``missing`` (rule 5)."""

    missing: tuple[str, ...]
    reason: ClarifyReason
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Start:
    """No transaction is active and the LLM entered ``intent``."""

    intent: str
    arguments: Mapping[str, JsonValue] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class Idle:
    """No transaction is active and none was asked for."""


RouteDecision = Fill | Cancel | InterruptAndRoute | StayAndIgnoreKeyword | Clarify | Start | Idle


def route_turn(catalog: Catalog, state: TransactionState, inputs: TurnInputs) -> RouteDecision:
    """Apply the routing precedence (see the module docstring) to one caller turn.

    Raises:
        InconsistentTransactionState: When the state is inconsistent (see ``diagnose``).
        StateError: When the active transaction is past collection (wrong phase).

    Tool calls that are not routing signals (other tools, other intents' setters) are ignored.
    """
    require_consistent(state)
    active = state.active_transaction
    if active is None:
        return _idle(catalog, inputs)
    if active.status != TransactionStatus.COLLECTING_PARAMETERS:
        raise StateError(
            f"route_turn applies while COLLECTING_PARAMETERS; {active.intent!r} is "
            f"{active.status.value}: use confirmation_gate/route_confirmation while awaiting "
            "confirmation, and no caller turn is routed during pre-validation or execution"
        )
    spec = catalog.intent(active.intent)
    values = _fills(spec, active.missing_parameters, inputs)
    if values:
        return Fill(values)
    starts = _starts(catalog, inputs, exclude=active.intent)
    if any(c.name == CANCEL_TOOL for c in inputs.calls):
        return Cancel(starts[0][0] if len(starts) == 1 else None)
    return _switch(catalog, spec, starts, inputs, active.missing_parameters)


def _idle(catalog: Catalog, inputs: TurnInputs) -> RouteDecision:
    starts = _starts(catalog, inputs, exclude=None)
    if not starts:
        return Idle()
    intent, args = starts[0]
    return Start(intent, _parameters(catalog.intent(intent), args))


def _fills(spec: IntentSpec, missing: tuple[str, ...], inputs: TurnInputs) -> dict[str, JsonValue]:
    """Setter values for the active intent, plus proposals for missing parameters.

    Returns them only when at least one pending parameter gets a value (rule 1) or a setter
    corrects a collected one; anything else is not an answer.
    """
    values: dict[str, JsonValue] = {}
    for call in inputs.calls:
        values.update(setter_values(spec, call))
    for name, value in inputs.proposals.items():
        if name in missing and value is not None and name not in values:
            values[name] = value
    return values


def setter_values(spec: IntentSpec, call: ToolUse) -> dict[str, JsonValue]:
    """The parameter values a setter call of ``spec`` carries (empty for any other tool).

    A one-parameter setter may name its argument anything; a multi-parameter setter passes
    each parameter by name. ``None`` values are dropped: null never clobbers.
    """
    params = spec.setter_map().get(call.name)
    if params is None:
        return {}
    if len(params) == 1 and params[0] not in call.args and len(call.args) == 1:
        value = next(iter(call.args.values()))
        return {} if value is None else {params[0]: value}
    return {p: call.args[p] for p in params if call.args.get(p) is not None}


def _starts(
    catalog: Catalog, inputs: TurnInputs, exclude: str | None
) -> list[tuple[str, Mapping[str, JsonValue]]]:
    """Distinct ``start_<intent>`` calls, in order, without the active intent."""
    found: dict[str, Mapping[str, JsonValue]] = {}
    for call in inputs.calls:
        intent = catalog.start_tools.get(call.name)
        if intent is not None and intent != exclude and intent not in found:
            found[intent] = call.args
    return list(found.items())


def _switch(
    catalog: Catalog,
    active: IntentSpec,
    starts: list[tuple[str, Mapping[str, JsonValue]]],
    inputs: TurnInputs,
    missing: tuple[str, ...],
) -> RouteDecision:
    """Rules 3-5 over the start calls that are not the active intent."""
    clear = [(i, a) for i, a in starts if _unambiguous(active, catalog.intent(i), a, inputs)]
    if len(clear) == 1:
        intent, args = clear[0]
        return InterruptAndRoute(intent, active.name, _parameters(catalog.intent(intent), args))
    if len(clear) > 1:
        return Clarify(missing, "competing_intents", tuple(i for i, _ in clear))
    if starts:
        return StayAndIgnoreKeyword(starts[0][0])
    return Clarify(missing, "no_answer")


def _unambiguous(
    active: IntentSpec, target: IntentSpec, args: Mapping[str, JsonValue], inputs: TurnInputs
) -> bool:
    """A different domain is unambiguous; a sibling intent needs one of its own cues."""
    if active.domain is None or active.domain != target.domain:
        return True
    quote = args.get("quote")
    words = _normal(quote if isinstance(quote, str) and quote else inputs.text)
    return any(re.search(rf"\b{re.escape(_normal(cue))}\b", words) for cue in target.cues)


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[\w$]+", text.lower()))


def _parameters(spec: IntentSpec, args: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """Parameters a start call already carries (``start_track_order(order_id=…)``)."""
    return {p: args[p] for p in spec.required if args.get(p) is not None}
