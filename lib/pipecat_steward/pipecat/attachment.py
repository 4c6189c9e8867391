"""One steward per LLM service, attached once: the check every attach makes first.

A steward steers one conversation through one LLM service. Attached twice to the same service,
it would decide every inference twice (the second hook wraps the first), and the call would
skip or repeat its steps; two stewards on one service would both steer it; a steward attached
to a second service would leave the first one hooked to a session it no longer watches. So an
attach that would do any of that is refused before it touches the service or the steward, and
so is a service of the wrong kind for the attach (something that is no LLM service, or a
speech-to-speech one given to the cascaded ``attach``).

A pipecat ``LLMSwitcher`` (a primary service and its failover, say) is attached as one: its
services are all claimed by the steward, which hooks each of them over the one session.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from pipecat.pipeline.llm_switcher import LLMSwitcher
from pipecat.services.llm_service import LLMService

from pipecat_steward.exceptions import StewardError
from pipecat_steward.pipecat.providers import adapter_class

if TYPE_CHECKING:
    from pipecat_steward.pipecat.steward import Steward

__all__ = ["claim_service", "claim_services"]

# Which steward steers a service is an attribute of the service: it lives exactly as long as
# the service (and its hook) does. A registry keyed weakly by the service would keep both
# alive for good, the steward holding its service: every finished call would stay in memory.
_STEWARD = "_pipecat_steward_owner"
# The name of the service each steward is attached to.
_SERVICES: weakref.WeakKeyDictionary[Steward, str] = weakref.WeakKeyDictionary()


def claim_service(steward: Steward, llm: object, *, speech_to_speech: bool) -> LLMService:
    """Record ``steward`` as ``llm``'s steward, or refuse the attach with the reason.

    Args:
        steward: The steward being attached.
        llm: What it is attached to.
        speech_to_speech: The attach is ``attach_s2s`` (else the cascaded ``attach``).

    Returns:
        ``llm``, now known to be an LLM service.

    Raises:
        TypeError: ``llm`` is no LLM service, or not of the kind this attach steers.
        StewardError: The steward is attached already, or the service has another steward.
    """
    return claim_services(steward, llm, speech_to_speech=speech_to_speech)[0]


def claim_services(steward: Steward, llm: object, *, speech_to_speech: bool) -> list[LLMService]:
    """``claim_service`` for an LLM service or a pipecat ``LLMSwitcher`` of cascaded ones.

    A switcher's services are one steward's together (only the active one infers): each is
    checked as a service would be, and none is claimed unless all can be.

    Returns:
        The services the steward now steers: ``llm``, or the switcher's, in its order.
    """
    if isinstance(llm, LLMSwitcher) and not speech_to_speech:
        services = [_kind_checked(member, speech_to_speech) for member in llm.llms]
    else:
        services = [_kind_checked(llm, speech_to_speech)]
    if len({id(service) for service in services}) < len(services):
        raise StewardError("this LLMSwitcher holds one service twice: list each service once")
    for service in services:
        _check_free(steward, service)
    for service in services:
        setattr(service, _STEWARD, steward)
    _SERVICES[steward] = ", ".join(type(service).__name__ for service in services)
    return services


def _check_free(steward: Steward, service: LLMService) -> None:
    """Refuse ``steward``'s attach to ``service`` when either is taken (see the module docstring)."""
    name = type(service).__name__
    attached = _SERVICES.get(steward)
    owner = getattr(service, _STEWARD, None)
    if attached is not None and owner is steward:
        raise StewardError(
            f"this steward is attached to this {name} already: attach it once (a second "
            "hook would decide every inference twice)"
        )
    if attached is not None:
        raise StewardError(
            f"this steward is attached to another service already ({attached}): a steward "
            "steers one LLM service, attached once"
        )
    if owner is not None:
        raise StewardError(
            f"this {name} already has a steward; two would both steer its calls: "
            "make one steward per call and attach each to its own LLM service"
        )


def _kind_checked(llm: object, speech_to_speech: bool) -> LLMService:
    if not isinstance(llm, LLMService):
        method = "attach_s2s" if speech_to_speech else "attach"
        raise TypeError(f"{method}(llm) takes a pipecat LLM service, not {type(llm).__name__}")
    cascaded = adapter_class(llm).channels.per_inference_hook
    if speech_to_speech and cascaded:
        raise TypeError(
            f"{type(llm).__name__} is a cascaded LLM service: use attach(llm), or "
            "attach_s2s with a speech-to-speech service"
        )
    if not speech_to_speech and not cascaded:
        raise TypeError(
            f"{type(llm).__name__} is speech-to-speech: use StewardS2S(...).attach_s2s(llm)"
        )
    return llm
