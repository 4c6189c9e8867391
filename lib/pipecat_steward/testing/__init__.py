"""Public test doubles for pipecat-steward users; everything here runs offline.

A scripted LLM service, local fakes of the LLM providers, a text-mode pipeline runner, the
scenario format and two ways to play a scenario: through the real Pipecat pipeline
(``run_scenario``) or straight through the engine driver (``run_scenario_direct``), and chaos
testing: a seeded caller and model, safety invariants and a shrinker (``run_chaos``).

Names load lazily, so importing the framework-free parts (``scenario``, ``direct``) does not
import Pipecat.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipecat_steward.testing.chaos_actors import ChaosCaller, ChaosHost, ChaosModel
    from pipecat_steward.testing.chaos_invariants import INVARIANTS, Violation
    from pipecat_steward.testing.chaos_run import ChaosReport, run_chaos
    from pipecat_steward.testing.chaos_slm import ChaosSLM, check_monitored
    from pipecat_steward.testing.chaos_surface import chaos_agent
    from pipecat_steward.testing.direct import run_scenario_direct
    from pipecat_steward.testing.expectations import check_turns
    from pipecat_steward.testing.monitored import run_scenario_monitored
    from pipecat_steward.testing.pipeline import (
        PlaybackTransport,
        ProviderSync,
        TextPipeline,
        TextTTS,
        transcript_turn_strategies,
    )
    from pipecat_steward.testing.scenario import (
        Scenario,
        ScenarioTurn,
        check_expectations,
        load_scenario,
        load_scenarios,
        trace_turn,
    )
    from pipecat_steward.testing.script import Call, Say, Step, split_step
    from pipecat_steward.testing.scripted_llm import (
        CallOutcome,
        CallRecord,
        ContextSnapshot,
        FunctionStep,
        InferenceRecord,
        ScriptedLLM,
        ScriptItem,
        visible_tool_names,
    )
    from pipecat_steward.testing.scripted_slm import (
        Delayed,
        Fail,
        ScriptedSLM,
        SLMRequest,
        VerdictOracle,
        null_object,
        verdict,
    )
    from pipecat_steward.testing.servers import (
        ChatCompletionsServer,
        GeminiLiveServer,
        NovaSonicFake,
        RealtimeServer,
        gemini_live_service,
        nova_sonic_service,
    )
    from pipecat_steward.testing.shrink import shrink, write_scenario
    from pipecat_steward.testing.simulate import run_scenario
    from pipecat_steward.testing.waiting import WaitBudget

_WHERE = {
    "pipeline": (
        "PlaybackTransport",
        "ProviderSync",
        "TextPipeline",
        "TextTTS",
        "transcript_turn_strategies",
    ),
    "script": ("Call", "Say", "Step", "split_step"),
    "scripted_llm": (
        "CallOutcome",
        "CallRecord",
        "ContextSnapshot",
        "FunctionStep",
        "InferenceRecord",
        "ScriptedLLM",
        "ScriptItem",
        "visible_tool_names",
    ),
    "servers": (
        "ChatCompletionsServer",
        "GeminiLiveServer",
        "NovaSonicFake",
        "RealtimeServer",
        "gemini_live_service",
        "nova_sonic_service",
    ),
    "scenario": (
        "Scenario",
        "ScenarioTurn",
        "check_expectations",
        "load_scenario",
        "load_scenarios",
        "trace_turn",
    ),
    "expectations": ("check_turns",),
    "simulate": ("run_scenario",),
    "direct": ("run_scenario_direct",),
    "chaos_actors": ("ChaosCaller", "ChaosHost", "ChaosModel"),
    "chaos_invariants": ("INVARIANTS", "Violation"),
    "chaos_run": ("ChaosReport", "run_chaos"),
    "chaos_slm": ("ChaosSLM", "check_monitored"),
    "chaos_surface": ("chaos_agent",),
    "shrink": ("shrink", "write_scenario"),
    "scripted_slm": (
        "Delayed",
        "Fail",
        "SLMRequest",
        "ScriptedSLM",
        "VerdictOracle",
        "null_object",
        "verdict",
    ),
    "monitored": ("run_scenario_monitored",),
    "waiting": ("WaitBudget",),
}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "ChaosCaller",
    "ChaosHost",
    "ChaosModel",
    "ChaosReport",
    "ChaosSLM",
    "check_monitored",
    "INVARIANTS",
    "Violation",
    "chaos_agent",
    "run_chaos",
    "shrink",
    "write_scenario",
    "verdict",
    "run_scenario_monitored",
    "null_object",
    "VerdictOracle",
    "ScriptedSLM",
    "SLMRequest",
    "Fail",
    "Delayed",
    "Call",
    "CallOutcome",
    "CallRecord",
    "ChatCompletionsServer",
    "ContextSnapshot",
    "FunctionStep",
    "GeminiLiveServer",
    "InferenceRecord",
    "NovaSonicFake",
    "PlaybackTransport",
    "ProviderSync",
    "RealtimeServer",
    "Say",
    "Scenario",
    "ScenarioTurn",
    "ScriptItem",
    "ScriptedLLM",
    "Step",
    "TextPipeline",
    "TextTTS",
    "check_expectations",
    "check_turns",
    "load_scenario",
    "load_scenarios",
    "gemini_live_service",
    "nova_sonic_service",
    "run_scenario",
    "run_scenario_direct",
    "split_step",
    "trace_turn",
    "transcript_turn_strategies",
    "visible_tool_names",
    "WaitBudget",
]


def __getattr__(name: str) -> Any:
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
