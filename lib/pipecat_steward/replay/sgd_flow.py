"""An SGD service schema as a slot-filling flow config.

One config per service (see ``docs/sgd.md`` for the reasoning):

- every schema slot is one user slot filled by the service's one multi-slot setter
  (``set_<service>``, field = slot name), ``required: False`` because requiredness belongs to
  intents, not slots (``travelers`` is optional for ``FindBus`` and required for
  ``BuyBusTicket``); its ``default`` is the first intent default the schema gives for it;
- tools (the setter, ``<intent>`` in snake case per intent) take another free name where the
  schema's names would give two tools one name or a tool an engine tool's name
  (``replay_names``);
- the active intent is one more user slot (``intent``, or another free name when the schema
  has a slot of that name); switching intents is a correction of it;
- each intent is a non-terminal task: ``inputs`` = its required and optional slots,
  ``requires`` = ``intent`` and its required slots, ``condition`` = ``intent == '<Intent>'``,
  so it fires as soon as it is the active intent with its required slots filled and re-fires
  after a correction of any input or of the intent, and re-runs when the caller adds a
  constraint (``rerun_on_new_input``), as SGD's system does;
- a transactional intent also needs the caller's confirmation, as SGD's system confirms before
  it calls: one more replay slot per such intent, ``yes`` once the caller affirmed the values
  read back, ``no`` again when a value changes after that (the task's ``condition`` reads it);
- a terminal ``EndDialogue`` task that needs a ``goodbye`` slot the replay never fills, so the
  flow never auto-completes (the completion rule would end the session once every
  active task succeeded, and SGD callers go on to other intents);
- readback off, steer-back and stall escape off (a replay has no stalls to recover from).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipecat_steward.core.slots import CompiledFlow, compile_flow
from pipecat_steward.core.slots.validate import STEWARD_TOOLS
from pipecat_steward.core.variables import JsonValue

__all__ = [
    "END_TASK",
    "GOODBYE_SLOT",
    "INTENT_SLOT",
    "ReplayNames",
    "build_flow_config",
    "compile_service",
    "replay_names",
    "setter_name",
    "tool_name",
]

INTENT_SLOT = "intent"
GOODBYE_SLOT = "goodbye"
END_TASK = "EndDialogue"
_NEVER = 10**9


@dataclass(frozen=True, slots=True)
class ReplayNames:
    """The replay's own slot and task names in one service's flow, free of the schema's."""

    intent: str
    goodbye: str
    end_task: str
    end_tool: str
    goodbye_setter: str
    confirm: Mapping[str, str]
    """Transactional intent → the slot that holds whether the caller confirmed it."""
    setter: str
    """The service's multi-slot setter tool."""
    tools: Mapping[str, str]
    """Intent → its executor tool."""

    @property
    def slots(self) -> frozenset[str]:
        """The replay's own slots (never compared with the gold state)."""
        return frozenset({self.intent, self.goodbye, *self.confirm.values()})


def _free(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"replay_{base}_{n}"
    taken.add(name)
    return name


def replay_names(service: Mapping[str, Any]) -> ReplayNames:
    """Pick the replay's names so that no schema slot, intent or tool of ``service`` is shadowed.

    Tools share one namespace with the engine's own (``correct_slot`` …): an intent whose
    natural tool name is taken (``CorrectSlot``, ``SetToy_1`` beside the ``set_toy_1`` setter,
    ``findThing`` beside ``FindThing``) gets another free one, so any schema compiles.
    """
    intents = [str(i["name"]) for i in service["intents"]]
    slots = {str(s["name"]) for s in service["slots"]} | set(intents)
    taken = set(STEWARD_TOOLS)
    tools = {intent: _free(tool_name(intent), taken) for intent in intents}
    setter = _free(setter_name(str(service["service_name"])), taken)
    goodbye = _free(GOODBYE_SLOT, slots)
    confirm = {
        str(i["name"]): _free(f"confirmed_{tools[str(i['name'])]}", slots)
        for i in service["intents"]
        if i.get("is_transactional")
    }
    return ReplayNames(
        intent=_free(INTENT_SLOT, slots),
        goodbye=goodbye,
        end_task=_free(END_TASK, slots),
        end_tool=_free("end_dialogue", taken),
        goodbye_setter=_free(f"set_{goodbye}", taken),
        confirm=confirm,
        setter=setter,
        tools=tools,
    )


def setter_name(service: str) -> str:
    """The service's setter tool when free: ``Restaurants_2`` → ``set_restaurants_2``."""
    return f"set_{service.lower()}"


def tool_name(intent: str) -> str:
    """An intent's executor tool when free: ``ReserveRestaurant`` → ``reserve_restaurant``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", intent).lower()


def _defaults(service: Mapping[str, Any]) -> dict[str, JsonValue]:
    defaults: dict[str, JsonValue] = {}
    for intent in service["intents"]:
        for slot, value in intent["optional_slots"].items():
            defaults.setdefault(slot, value)
    return defaults


def _slot(name: str, setter: str, description: str, default: JsonValue = None) -> dict[str, Any]:
    return {
        "name": name,
        "source": "user",
        "setter": setter,
        "setter_field": name,
        "required": False,
        "default": default,
        "hint": description,
        "ask": f"What is the {name.replace('_', ' ')}?",
    }


def _task(intent: Mapping[str, Any], names: ReplayNames) -> dict[str, Any]:
    name = str(intent["name"])
    required = list(intent["required_slots"])
    condition = f"{names.intent} == '{name}'"
    confirm = names.confirm.get(name)
    if confirm:
        required.append(confirm)
        condition += f" and {confirm} == 'yes'"
    return {
        "name": name,
        "tool": names.tools[name],
        "inputs": [*intent["required_slots"], *intent["optional_slots"]],
        "requires": [names.intent, *required],
        "condition": condition,
        "success_check": None,
        "rerun_on_new_input": True,
    }


def build_flow_config(service: Mapping[str, Any]) -> dict[str, Any]:
    """Return the flow config (plain data) of one SGD service schema entry.

    The replay's own slots and end task take names no schema slot or intent uses
    (``replay_names``), so any schema replays.
    """
    names = replay_names(service)
    setter = names.setter
    defaults = _defaults(service)
    slots = [_slot(names.intent, setter, "The service intent the caller wants")]
    slots += [
        _slot(s["name"], setter, s.get("description", ""), defaults.get(s["name"]))
        for s in service["slots"]
    ]
    slots += [
        _slot(confirm, setter, f"Whether the caller confirmed {intent}")
        for intent, confirm in names.confirm.items()
    ]
    slots.append(_slot(names.goodbye, names.goodbye_setter, "The caller ends the dialogue"))
    tasks = [_task(i, names) for i in service["intents"]]
    tasks.append(
        {
            "name": names.end_task,
            "tool": names.end_tool,
            "requires": [names.goodbye],
            "terminal": True,
        }
    )
    steer = {"soft_after": _NEVER, "hard_after": _NEVER, "escalate_after": _NEVER}
    return {"slots": slots, "tasks": tasks, "steer_back": steer}


def compile_service(service: Mapping[str, Any]) -> CompiledFlow:
    """Build and compile the flow of one SGD service."""
    return compile_flow(build_flow_config(service))
