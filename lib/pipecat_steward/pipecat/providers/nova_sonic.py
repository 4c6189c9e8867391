"""Amazon Nova Sonic (``AWSNovaSonicLLMService``, Python >= 3.12): tools and prompt fixed at connect.

- Tools and the system prompt go in at connect (``tools=steward.all_tools()``);
  ``reset_conversation()`` would reconnect with a new prompt, so nothing is updated mid-call.
- Every appended role becomes ``USER`` text. Pipecat can put a non-interactive text on the
  wire mid-session, but Nova documents history only before audio starts, so the steward
  treats the silent channel as absent: queued corrections ride the next tool result instead.
- An interactive (``run_llm``) note is answered at once, even while the bot speaks.
- The interruption handler is a no-op; the service answers the caller's audio by itself.
"""

from __future__ import annotations

from pipecat_steward.pipecat.providers.base import Channels, LLMKind, ProviderAdapter

__all__ = ["NovaSonicAdapter"]


class NovaSonicAdapter(ProviderAdapter):
    """The steward's view of an ``AWSNovaSonicLLMService``."""

    kind = LLMKind.NOVA_SONIC
    # No silent note: on the wire, but outside Nova's documented protocol.
    channels = Channels(kind=LLMKind.NOVA_SONIC)
    service = ("pipecat.services.aws.nova_sonic.llm", "AWSNovaSonicLLMService")
