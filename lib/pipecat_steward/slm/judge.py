"""The unified LLM judge behind tool-gate and guard conditions.

With a resolved stage the judge is one structured call with the strict ``{"allow": bool}``
schema. Only when no logic_slm stage resolved does it fall back to the legacy word protocol:
a plain completion answered ``ALLOW`` or ``DENY``, from OpenAI with the ``OPENAI_API_KEY``
environment key (``OPENAI_BASE_URL`` and ``STEWARD_JUDGE_MODEL`` are honoured).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pipecat_steward.exceptions import SLMOutputError, SLMResolutionError
from pipecat_steward.slm.client import SLMClient, structured_completion
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.prompts import compose_system

__all__ = ["JUDGE_SCHEMA", "LEGACY_JUDGE_MODEL", "evaluate_judge"]

JUDGE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "boolean"}},
    "required": ["allow"],
    "additionalProperties": False,
}
"""The judge's strict verdict schema."""

LEGACY_JUDGE_MODEL = "gpt-4o-mini"
"""The legacy path's model unless ``STEWARD_JUDGE_MODEL`` names another."""

_LEGACY_SYSTEM = (
    "You decide whether an action is allowed. Answer with exactly one word: ALLOW if the "
    "evidence shows the condition holds, otherwise DENY."
)
_WORD = re.compile(r"\b(ALLOW|DENY)\b")

Evidence = str | Mapping[str, Any] | Sequence[Any]


async def evaluate_judge(
    stage: SLMStage | None,
    prompt: str,
    evidence: Evidence,
    *,
    client: SLMClient | None = None,
    timeout: float | None = None,
) -> bool:
    """Decide an LLM condition: ``True`` allows, ``False`` denies.

    Args:
        stage: The session's logic_slm stage, or ``None`` when none resolved.
        prompt: The condition, in the author's words.
        evidence: What the judge may look at (text, or JSON-able data).
        client: The session's client, for metering and connection reuse.
        timeout: Hard bound in seconds (default: the stage's, or 8 s on the legacy path).

    Raises:
        SLMError: The call failed; the caller's fail mode decides what that means.
    """
    user = f"Condition:\n{prompt}\n\nEvidence:\n{_render(evidence)}"
    if stage is None:
        return await _legacy(user, client, timeout or 8.0)
    system = compose_system(stage.prompts["llm_judge"], JUDGE_SCHEMA)
    result = await structured_completion(
        stage, JUDGE_SCHEMA, system, user, timeout=timeout, scope="llm_judge", client=client
    )
    return bool(result.value["allow"])


def _render(evidence: Evidence) -> str:
    """Render evidence as text; structured evidence becomes stable JSON."""
    if isinstance(evidence, str):
        return evidence
    return json.dumps(evidence, sort_keys=True, default=str, ensure_ascii=False)


async def _legacy(user: str, client: SLMClient | None, timeout: float) -> bool:
    """Ask OpenAI with the environment key for an ALLOW/DENY word."""
    if not os.environ.get("OPENAI_API_KEY"):
        raise SLMResolutionError(
            "llm judge: no logic_slm stage resolved and OPENAI_API_KEY is not set; "
            "configure aux.logic_slm (a stack or the stage overlay) or set the key"
        )
    stage = SLMStage(
        provider="openai",
        model=os.environ.get("STEWARD_JUDGE_MODEL", LEGACY_JUDGE_MODEL),
        base_url=os.environ.get("OPENAI_BASE_URL"),
        max_output_tokens=5,
        timeout_s=timeout,
    )
    owned = client is None
    active = client or SLMClient()
    try:
        text = await active.complete_text(
            stage, _LEGACY_SYSTEM, user, timeout=timeout, scope="llm_judge"
        )
    finally:
        if owned:
            await active.aclose()
    return _word(text)


def _word(text: str) -> bool:
    """Read the legacy answer; anything but one clear word is an output error."""
    words = set(_WORD.findall(text.upper()))
    if len(words) != 1:
        raise SLMOutputError(f"legacy judge answer is not one of ALLOW/DENY: {text[:80]!r}")
    return words == {"ALLOW"}
