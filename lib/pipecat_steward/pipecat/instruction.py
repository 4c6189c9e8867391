"""The system instruction of a cascaded LLM service, as the steward reads and sets it each turn.

The steward changes the service's instruction on most turns. pipecat's settings update (what
an ``LLMUpdateSettingsFrame`` does) serves every kind of change: it compares every settings
field, logs the change at INFO, and marks the service usable again, since new settings (a key,
a model) may be what mends a service an error wrote off. A new instruction mends nothing, so
for the instruction alone the steward does only what that update does to it: the service's
base instruction is replaced and the service composes its effective instruction from it (with
the guidance it appends for its tools and turns). A service an error wrote off stays written
off, no log line is written per turn, and the change costs a few attribute writes.

A service whose class reacts to settings updates itself (it overrides ``_update_settings``)
gets pipecat's full update, so its reaction still runs; that includes the usable mark, as an
``LLMUpdateSettingsFrame`` would. pipecat's own overrides that react only to other fields
(Gemini's, to its model and thinking settings) are known, and those services get the
instruction alone.
"""

from __future__ import annotations

import functools
from typing import Any

from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings

__all__ = ["service_instruction", "set_service_instruction"]

_UNSET: Any = object()

_OTHER_FIELDS_ONLY = frozenset(
    {("pipecat.services.google.llm", "GoogleLLMService._update_settings")}
)
"""pipecat's overrides of ``_update_settings`` that react to no change of the instruction."""


def service_instruction(llm: LLMService[Any]) -> str | None:
    """The instruction ``llm`` composes its effective one from (what the steward last set).

    That is the base instruction, without what the service appends to it, so an instruction
    the steward set reads back as set. An app's own settings update replaces it too.
    """
    base = getattr(llm, "_base_system_instruction", _UNSET)
    if base is _UNSET:
        return getattr(llm.settings, "system_instruction", None)  # pyright: ignore[reportAttributeAccessIssue]
    return base


async def set_service_instruction(llm: LLMService[Any], system: str) -> None:
    """Make ``system`` the base instruction of ``llm`` (see the module docstring)."""
    if _composes_alone(llm):
        llm._settings.system_instruction = system  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
        llm._base_system_instruction = system  # pyright: ignore[reportPrivateUsage]
        llm._compose_system_instruction()  # pyright: ignore[reportPrivateUsage]
    else:
        await llm._update_settings(LLMSettings(system_instruction=system))  # pyright: ignore[reportPrivateUsage]


def _composes_alone(llm: LLMService[Any]) -> bool:
    """Whether a new base instruction needs nothing from ``llm`` but its composition."""
    return (
        _update_known(type(llm))
        and hasattr(llm, "_base_system_instruction")
        and hasattr(llm, "_compose_system_instruction")
    )


@functools.cache
def _update_known(kind: type[LLMService[Any]]) -> bool:
    """Whether ``kind``'s settings update is pipecat's own or reacts to no instruction change.

    A class's answer never changes: it is worked out once, not at every instruction change.
    """
    update = kind._update_settings  # pyright: ignore[reportPrivateUsage]
    return update is LLMService._update_settings or (  # pyright: ignore[reportPrivateUsage]
        (update.__module__, update.__qualname__) in _OTHER_FIELDS_ONLY
    )
