"""An agent's logic_slm stage, from its ``aux:`` section.

``agent_stage`` reads the section from an agent folder (``steward forecast``, ``prompts``,
``validate``); ``aux_stage`` resolves a section already loaded (a live call's supervision uses
the one ``load_agent`` read). Agent folders are specified elsewhere; only ``agent.yaml``'s
optional ``aux:`` section matters here::

    aux:
      stack: openai            # a manifest in stacks/ (optional)
      logic_slm:               # the sparse stage overlay (optional)
        config: {model: gpt-4.1-mini}

Everything else in the file is ignored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipecat_steward.agent.loader import agent_yaml, load_yaml
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.manifests import load_builtin_table, load_stack
from pipecat_steward.slm.resolution import resolve_stage

__all__ = ["agent_stage", "aux_stage"]


def _aux_section(agent_dir: Path) -> dict[str, Any]:
    """Return the ``aux:`` mapping of ``agent_dir/agent.yaml`` (empty when absent).

    The file is found and read as every agent folder is (``agent_yaml``, ``load_yaml``); the
    rest of it is not checked, so a half-written agent can be forecast.
    """
    path = agent_yaml(agent_dir)
    aux = load_yaml(path).get("aux")
    if aux is not None and not isinstance(aux, dict):
        raise ConfigError(f"{path}:aux", "must be a mapping with optional stack and logic_slm")
    return aux or {}


def agent_stage(agent_dir: Path | None, stack: str | None) -> tuple[SLMStage, str | None]:
    """Resolve the logic_slm stage an agent folder selects; ``stack`` overrides its choice.

    Returns:
        The stage and the stack name used (``None`` when none).
    """
    return aux_stage(_aux_section(agent_dir) if agent_dir is not None else {}, stack)


def aux_stage(aux: Mapping[str, Any], stack: str | None = None) -> tuple[SLMStage, str | None]:
    """Resolve the logic_slm stage an ``aux:`` section selects; ``stack`` overrides its choice.

    Returns:
        The stage and the stack name used (``None`` when none).
    """
    name = stack or aux.get("stack")
    if name is not None and not isinstance(name, str):
        raise ConfigError("aux.stack", "must be a stack name, e.g. openai")
    manifest = load_stack(name) if name else None
    stage = resolve_stage(table=load_builtin_table(), stack=manifest, overlay=aux.get("logic_slm"))
    return stage, name
