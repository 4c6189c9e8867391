"""An in-memory AWS Nova Sonic bidirectional stream for offline S2S tests.

Pipecat's `AWSNovaSonicLLMService` talks to Bedrock through a Smithy client whose endpoint
is fixed in `create_client()`, the service's override point. `nova_sonic_service(fake,
...)` builds the real service with `create_client` returning this fake, which speaks Nova
Sonic's JSON event protocol: an interactive user text block or a tool result starts the
next scripted step (speculative text, audio, final text, or a `toolUse`).

    async with NovaSonicFake([Say("Hello.")]) as fake:
        llm = nova_sonic_service(fake, system_instruction="...")
        pipeline = TextPipeline(llm, speech_to_speech=True, provider_sync=fake.settler(llm))

`settler(llm)` lets a harness wait for explicit completion instead of quiet time, with no
marker: the fake IS the service's stream. Pipecat writes every client event with
``await input_stream.send(...)`` inline in the code that makes it (``_send_client_event``), and
the fake records it before ``send`` returns, so whatever the service sent before the settler
runs is already recorded (a function call's result is sent before its result frame, which the
pipeline waits for, is pushed). Pipecat's receive loop (``_receive_task_handler``) takes one
output event with ``receive()``, handles it to the end, then calls ``receive()`` again; so once
every response has finished, every event put in the outbox was taken, and the loop is back in
``receive()``, the service has handled everything the fake sent.

Needs Python >= 3.12 and `pipecat-ai[aws-nova-sonic]` (`aws_sdk_bedrock_runtime`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import warnings
from collections.abc import Iterable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from pipecat_steward.testing.script import Call, Step, split_step
from pipecat_steward.testing.servers._base import DEFAULT_REPLY, RespondingFake, StepSource

if TYPE_CHECKING:
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    from pipecat_steward.testing.pipeline import ProviderSync

Event = dict[str, Any]
_AUDIO = base64.b64encode(b"\x00\x00" * 480).decode()  # 20 ms of 24 kHz silence


class NovaSonicFake(RespondingFake[Event]):
    """The model side of a Nova Sonic stream, scripted per response.

    Attributes:
        received: Every client event (`{"<eventName>": {...}}`), in order.

    """

    def __init__(
        self,
        script: Iterable[StepSource] = (),
        *,
        default: Step = DEFAULT_REPLY,
        latency: float = 0.0,
    ) -> None:
        """Create the fake.

        Args:
            script: One step per model response; a callable step gets the triggering event.
            default: The response once the script is exhausted.
            latency: Seconds before each response starts, as a provider's time to first audio.

        """
        super().__init__(script, default=default, latency=latency)
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self._open: dict[str, Event] = {}
        self.streams = 0
        self._put = self._taken = 0
        self._handling = False  # the consumer took an event and has not asked for the next
        self._moved = asyncio.Event()

    async def _listen(self, stack: AsyncExitStack, port: int) -> int:
        # An in-memory stream: no socket; stopping ends the output stream.
        stack.push_async_callback(self.close)
        return 0

    def texts(self) -> list[tuple[str, bool]]:
        """Every text block the client sent with a USER role, as (text, interactive)."""
        starts = {
            e["contentStart"]["contentName"]: e["contentStart"] for e in self._of("contentStart")
        }
        found: list[tuple[str, bool]] = []
        for event in self._of("textInput"):
            start = starts.get(event["textInput"]["contentName"], {})
            if start.get("role") == "USER":
                found.append((event["textInput"]["content"], bool(start.get("interactive"))))
        return found

    def tool_results(self) -> list[str]:
        """Return the content of every `toolResult` the client sent."""
        return [e["toolResult"]["content"] for e in self._of("toolResult")]

    async def user_says(self, text: str) -> None:
        """Transcribe `text` as the caller's speech, then answer with the next step."""
        final = json.dumps({"generationStage": "FINAL"})
        await self._block("TEXT", "USER", {"textOutput": {"content": text}}, "END_TURN", final)
        self.start_response({"userSays": text})

    def settler(self, llm: Any) -> ProviderSync:
        """A ``ProviderSync`` for a ``TextPipeline`` of ``llm`` (this fake's service)."""
        client = llm.create_client()
        if not (isinstance(client, _FakeBedrockClient) and client.fake is self):
            raise ValueError("settler(llm) needs a service built by nova_sonic_service(fake)")
        return self.settled

    async def settled(self) -> int:
        """Wait until the fake and its service have handled everything each sent the other.

        That is: no response is running, every output event put was taken, and the service's
        receive loop is back in ``receive()`` (see the module docstring). Returns the number
        of client events received.
        """
        while self.responding or self._taken < self._put or self._handling:
            self._moved.clear()
            await self._moved.wait()
        return len(self.received)

    # -- the DuplexEventStream surface pipecat uses --------------------------------------

    @property
    def input_stream(self) -> NovaSonicFake:
        """The input side: pipecat calls `send(chunk)` on it."""
        return self

    async def send(self, chunk: Any) -> None:
        await self._on_client_event(json.loads(chunk.value.bytes_.decode())["event"])

    async def await_output(self) -> tuple[None, NovaSonicFake]:
        return None, self

    async def receive(self) -> Any:
        self._handled()
        event = await self._outbox.get()
        if event is not None:
            self._taken += 1
            self._handling = True
        return event

    async def close(self) -> None:
        await self._outbox.put(None)

    # -- the model -----------------------------------------------------------------------

    def _of(self, name: str) -> list[Event]:
        return [e for e in self.received if name in e]

    async def _on_client_event(self, event: Event) -> None:
        self.record(event)
        name, body = next(iter(event.items()))
        if name == "contentStart":
            self._open[body["contentName"]] = body
        elif name == "contentEnd":
            start = self._open.pop(body["contentName"], {})
            if _starts_response(start):
                self.start_response(event)

    def _response_ended(self, task: asyncio.Task[None]) -> None:
        super()._response_ended(task)
        self._moved.set()

    def _handled(self) -> None:
        """The consumer asks for the next event: it has handled the one it took before."""
        self._handling = False
        self._moved.set()

    async def _respond(self, step: Step) -> None:
        text, calls = split_step(step)
        await self._emit({"completionStart": {}})
        for call in calls:
            await self._tool_use(call)
        if text:
            await self._speak(text)
        await self._emit({"completionEnd": {}})

    async def _speak(self, text: str) -> None:
        speculative = json.dumps({"generationStage": "SPECULATIVE"})
        final = json.dumps({"generationStage": "FINAL"})
        output = {"textOutput": {"content": text}}
        await self._block("TEXT", "ASSISTANT", output, "PARTIAL_TURN", speculative)
        await self._emit({"contentStart": {"type": "AUDIO", "role": "ASSISTANT"}})
        for _ in text.split(" "):
            await self._emit({"audioOutput": {"content": _AUDIO}})
            await asyncio.sleep(0)
        await self._emit({"contentEnd": {"stopReason": "END_TURN"}})
        await self._block("TEXT", "ASSISTANT", output, "END_TURN", final)

    async def _tool_use(self, call: Call) -> None:
        call_id = call.tool_call_id or self.new_id("tooluse")
        use = {"toolName": call.name, "toolUseId": call_id, "content": json.dumps(dict(call.args))}
        await self._block("TOOL", "TOOL", {"toolUse": use}, "TOOL_USE")

    async def _block(
        self, kind: str, role: str, body: Event, stop: str, stage: str | None = None
    ) -> None:
        start: Event = {"type": kind, "role": role}
        if stage is not None:
            start["additionalModelFields"] = stage
        await self._emit({"contentStart": start})
        await self._emit(body)
        await self._emit({"contentEnd": {"stopReason": stop}})

    async def _emit(self, event: Event) -> None:
        from aws_sdk_bedrock_runtime.models import (
            BidirectionalOutputPayloadPart,
            InvokeModelWithBidirectionalStreamOutputChunk,
        )

        payload = BidirectionalOutputPayloadPart(bytes_=json.dumps({"event": event}).encode())
        self._put += 1
        await self._outbox.put(InvokeModelWithBidirectionalStreamOutputChunk(value=payload))


class _FakeBedrockClient:
    """The one `BedrockRuntimeClient` method the service calls, answered by the fake."""

    def __init__(self, fake: NovaSonicFake) -> None:
        self.fake = fake

    async def invoke_model_with_bidirectional_stream(self, _input: Any) -> NovaSonicFake:
        self.fake.streams += 1
        return self.fake


def nova_sonic_service(fake: NovaSonicFake, **kwargs: Any) -> AWSNovaSonicLLMService:
    """Build a real `AWSNovaSonicLLMService` whose client is `fake`.

    Args:
        fake: The scripted model.
        **kwargs: Passed to `AWSNovaSonicLLMService` (credentials default to dummies).

    """
    from pipecat.services.aws.nova_sonic.llm import AWSNovaSonicLLMService

    class _OfflineNovaSonic(AWSNovaSonicLLMService):
        def create_client(self) -> Any:
            return _FakeBedrockClient(fake)

    options: dict[str, Any] = {"secret_access_key": "test", "access_key_id": "test"}
    options.update(region="us-east-1")
    options.update(kwargs)
    with warnings.catch_warnings():
        # pipecat 1.14's constructor reads ready.wav via wave.open(file_object), which never
        # closes that file; it is freed at once and warns, which strict test suites fail on.
        warnings.filterwarnings("ignore", r"unclosed file .*ready\.wav", ResourceWarning)
        return _OfflineNovaSonic(**options)


def _starts_response(start: Event) -> bool:
    # Nova answers interactive user text and tool results; a non-interactive block is context.
    interactive_text = start.get("type") == "TEXT" and start.get("role") == "USER"
    return (interactive_text and bool(start.get("interactive"))) or start.get("type") == "TOOL"
