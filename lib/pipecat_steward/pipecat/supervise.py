"""Attach the procedure monitor and the entity extractor to a live steward when they are needed.

``attach_supervision(steward, llm)`` is what a live call (``steward rehearse``, the README's
examples, an application's own bot) calls after ``steward.attach(llm)``: when the agent has
judge steps, ``llm`` applicability conditions or extraction-eligible variables and a logic_slm
stage resolves from its ``aux:`` section, it builds one metered :class:`SLMClient` (usage goes
to the default ledger) and attaches both. ``STEWARD_MONITOR_ENABLED=0`` is the kill switch:
no monitor, no extractor, and gates stay deterministic (a closed judge gate vetoes, naming the
unavailable monitor).

``Steward.attach`` (and ``StewardS2S.attach_s2s``) call it themselves, so every live entry
point is supervised. It is idempotent: a second call returns what the first attached, and a
monitor or extractor attached by hand (``attach_monitor``, ``attach_extractor``) replaces the
automatic one, so a steward never runs two. A logic_slm "resolves" when its stage resolves
and its credentials are present (an API key in the environment, or a self-hosted
``base_url``); without them nothing is attached and the steward behaves as an unsupervised
one (judge steps stay open, closed gates veto naming the unavailable monitor).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loguru import logger

from pipecat_steward.core.extraction import eligible
from pipecat_steward.exceptions import ConfigError, SLMError
from pipecat_steward.pipecat.extractor import EntityExtractor, attach_extractor
from pipecat_steward.pipecat.monitor import ProcedureMonitor, attach_monitor
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.pipecat.switch import KILL_SWITCH, monitor_enabled
from pipecat_steward.slm import SLMClient, SLMStage

__all__ = [
    "KILL_SWITCH",
    "Supervision",
    "attach_supervision",
    "credentials_present",
    "detach_supervision",
    "monitor_enabled",
    "needs_slm",
]


def needs_slm(steward: Steward) -> tuple[bool, bool]:
    """``(monitor, extractor)``: whether the agent has work for each."""
    agent = steward.agent
    procs = agent.procedures
    judged = procs is not None and any(
        s.kind == "judge" or s.applies_llm is not None for s in procs.steps.values()
    )
    return judged, bool(eligible(agent.variables))


@dataclass
class Supervision:
    """What ``attach_supervision`` attached (either part may be None)."""

    client: SLMClient
    monitor: ProcedureMonitor | None
    extractor: EntityExtractor | None

    async def aclose(self) -> None:
        """Stop both and close the client."""
        if self.monitor is not None:
            await self.monitor.aclose()
        if self.extractor is not None:
            await self.extractor.aclose()
        await self.client.aclose()


_KEYS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "bedrock": ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    "vertex": ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"),
}


def credentials_present(stage: SLMStage, env: Mapping[str, str]) -> bool:
    """Whether ``stage`` can be called: its API key is set, or it is a self-hosted endpoint."""
    if stage.provider == "openai_compatible":
        return stage.base_url is not None
    if stage.api_key_env:
        return bool(env.get(stage.api_key_env))
    if stage.provider == "vertex" and stage.project:
        return True
    return any(env.get(name) for name in _KEYS[stage.provider])


_STAGES: dict[str, SLMStage] = {}  # one per distinct aux: section a process has loaded


def _stage(steward: Steward, env: Mapping[str, str]) -> SLMStage | None:
    agent = steward.agent
    try:
        stage = _loaded_stage(agent.raw.get("aux") or {}) if agent.folder is not None else None
    except (ConfigError, SLMError) as err:
        logger.warning(f"no logic_slm resolves ({err}); judge steps stay open, gates closed")
        return None
    if stage is not None and not credentials_present(stage, env):
        logger.info(f"logic_slm ({stage.provider}) has no credentials; no monitor or extractor")
        return None
    return stage


def _loaded_stage(aux: Mapping[str, Any]) -> SLMStage:
    """The stage of the ``aux:`` section the agent was loaded with.

    A worker attaches one loaded agent to every call: the stage is resolved once per distinct
    section, never by reading the agent's folder, a stack manifest or the built-in table again.
    """
    key = repr(aux)  # YAML data: its repr names every value (a date too, where JSON fails)
    stage = _STAGES.get(key)
    if stage is None:
        from pipecat_steward.cli._slm_agent import aux_stage

        stage = _STAGES[key] = aux_stage(aux)[0]
    return stage


def detach_supervision(steward: Steward) -> None:
    """Detach the steward's monitor and extractor (whoever attached them)."""
    if steward.monitor is not None:
        steward.monitor.detach()
    if steward.extractor is not None:
        steward.extractor.detach()
    steward.supervision = None


def attach_supervision(
    steward: Steward,
    llm: Any,
    *,
    stage: SLMStage | None = None,
    client: SLMClient | None = None,
    env: Mapping[str, str] | None = None,
    **monitor: Any,
) -> Supervision | None:
    """Attach the monitor and the extractor when the agent needs them and a logic_slm resolves.

    Args:
        steward: The steward (already attached to ``llm``).
        llm: The LLM service the monitor corrects.
        stage: The logic_slm stage (default: resolved from the agent folder's ``aux:``).
        client: The client to use (default: a new one metering to the default ledger).
        env: The environment for the kill switch (default: ``os.environ``).
        **monitor: Passed to ``attach_monitor`` (``rider``, ``timeout`` …).

    Returns:
        What was attached, or None (kill switch, nothing to do, or no logic_slm).
    """
    wants_monitor, wants_extractor = needs_slm(steward)
    env = os.environ if env is None else env
    if not monitor_enabled(env):
        logger.info(f"{KILL_SWITCH}=0: no monitor and no extractor; gates stay deterministic")
        detach_supervision(steward)
        return None
    if steward.supervision is not None and stage is None and client is None and not monitor:
        return steward.supervision  # already attached: attaching is idempotent
    if not (wants_monitor or wants_extractor):
        return None
    stage = stage or _stage(steward, env)
    if stage is None:
        return None
    client = client or SLMClient()
    mon = attach_monitor(steward, llm, client, stage, **monitor) if wants_monitor else None
    ext = attach_extractor(steward, client, stage) if wants_extractor else None
    steward.supervision = Supervision(client, mon, ext)
    return steward.supervision
