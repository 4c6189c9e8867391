"""The slot-filling DAG engine: slot statuses and merge rules that never lose an answer. Pure.

Typical use by an adapter::

    flow = compile_flow(config_dict)
    state = SessionState()
    result = step(flow, state, user_text="4 people next Friday")
    # … carry out result.action: set tools + suffix, or preempt, run result.action.calls …
    routed = route_setter(flow, result.state, "set_reservation_basics", tool_result)
    result = step(flow, routed.state)  # re-invocation after the tool result
"""

from pipecat_steward.core.slots.action import (
    Action,
    CallKind,
    Chooser,
    DebugEntry,
    EngineStep,
    Hint,
    Phase,
    ToolCall,
)
from pipecat_steward.core.slots.affirm import is_affirmation, is_affirmative
from pipecat_steward.core.slots.compiled import (
    CompiledFlow,
    CompiledSlot,
    CompiledTask,
    compile_flow,
)
from pipecat_steward.core.slots.config import FlowConfig, SlotConfig, TaskConfig
from pipecat_steward.core.slots.dag import (
    AllDone,
    Announce,
    Ask,
    AwaitReadback,
    Decision,
    Fire,
    decide,
    is_complete,
)
from pipecat_steward.core.slots.engine import step
from pipecat_steward.core.slots.merge import merge_record
from pipecat_steward.core.slots.prompt import SENTINEL
from pipecat_steward.core.slots.routing import (
    FillResult,
    Routed,
    confirm_pending,
    correct_slot,
    decline_slot,
    fill_slots,
    propose,
    reject_pending,
    route_executor,
    route_setter,
)
from pipecat_steward.core.slots.sources import (
    AnnounceSource,
    EventSource,
    SlotSource,
    TaskSource,
    UserSource,
    parse_source,
)
from pipecat_steward.core.slots.validate import STEWARD_TOOLS, check_flow, load_flow_config

__all__ = [
    "SENTINEL",
    "STEWARD_TOOLS",
    "Action",
    "AllDone",
    "Announce",
    "AnnounceSource",
    "Ask",
    "AwaitReadback",
    "CallKind",
    "Chooser",
    "CompiledFlow",
    "CompiledSlot",
    "CompiledTask",
    "DebugEntry",
    "Decision",
    "EventSource",
    "FillResult",
    "Fire",
    "FlowConfig",
    "Hint",
    "Phase",
    "Routed",
    "SlotConfig",
    "EngineStep",
    "SlotSource",
    "TaskConfig",
    "TaskSource",
    "ToolCall",
    "UserSource",
    "check_flow",
    "compile_flow",
    "confirm_pending",
    "correct_slot",
    "decide",
    "decline_slot",
    "fill_slots",
    "is_affirmation",
    "is_affirmative",
    "is_complete",
    "load_flow_config",
    "merge_record",
    "parse_source",
    "propose",
    "reject_pending",
    "route_executor",
    "route_setter",
    "step",
]
