"""`ScriptedLLM`: a real pipecat `LLMService` that answers from a script.

Each inference (each `LLMContextFrame` the service processes, from either direction) takes
the next scripted step and emits it the way a real model does: text between
`LLMFullResponseStartFrame` and `LLMFullResponseEndFrame`, tool calls through pipecat's own
`run_function_calls`, so registered handlers run, results reach the assistant aggregator,
and the aggregator asks for the re-inference that takes the following step.

Like a real model it can only call the tools the context currently advertises
(`context.tools`): any other call is recorded as `refused` and not executed. Every inference
is recorded (`ScriptedLLM.inferences`) with the tools it could see, the instructions it was
given and the calls it made.

    llm = ScriptedLLM([
        Call("set_party_size", {"size": 4}),          # inference 1: a tool call
        Say("Four people. What time?"),               # inference 2: after the result
        FunctionStep(lambda ctx: Say(f"I see {len(ctx.tools)} tools.")),
    ])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pipecat.frames.frames import (
    Frame,
    FunctionCallFromLLM,
    FunctionCallResultFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings

from pipecat_steward.pipecat.preempt import split_sentences
from pipecat_steward.testing.script import Call, Step, is_step, split_step

Direction = Literal["downstream", "upstream"]
CallOutcome = Literal["pending", "ok", "error", "refused"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSnapshot:
    """What the model sees at one inference; the argument of a dynamic step.

    Attributes:
        index: 0-based inference number.
        direction: `downstream` (a user turn) or `upstream` (a re-inference after a result).
        messages: A copy of the context messages.
        tools: Names of the tools the context advertises.
        system: The service's system instruction at this inference.

    """

    index: int
    direction: Direction
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[str, ...]
    system: str | None

    @property
    def last_user_text(self) -> str | None:
        """The text of the latest user message, if any."""
        for message in reversed(self.messages):
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                return message["content"]
        return None

    @property
    def notes(self) -> tuple[str, ...]:
        """Texts of the context's system and developer messages, in order."""
        return tuple(
            m["content"]
            for m in self.messages
            if m.get("role") in ("system", "developer") and isinstance(m.get("content"), str)
        )


@dataclass(frozen=True, slots=True)
class FunctionStep:
    """A dynamic step: `fn(snapshot)` decides the response at inference time."""

    fn: Callable[[ContextSnapshot], Step]


ScriptItem: TypeAlias = Step | FunctionStep | Callable[[ContextSnapshot], Step]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """One tool call the model attempted.

    Attributes:
        name: Tool name.
        args: Arguments.
        tool_call_id: The id it was issued with.
        outcome: `refused` (tool not visible, never executed), `pending`, `ok` or `error`.
        result: The handler's result once it arrived.

    """

    name: str
    args: Mapping[str, Any]
    tool_call_id: str
    outcome: CallOutcome
    result: Any = None


@dataclass(slots=True, kw_only=True)
class InferenceRecord:
    """The record of one inference.

    Attributes:
        seen: What the model saw.
        said: The text it said ("" when none).
        calls: The calls it attempted, updated as results arrive.
        scripted: False when the script was exhausted (an empty response was emitted).

    """

    seen: ContextSnapshot
    said: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    scripted: bool = True

    @property
    def visible_tools(self) -> tuple[str, ...]:
        """Names of the tools visible at this inference."""
        return self.seen.tools


class ScriptedLLM(LLMService):
    """An `LLMService` whose every inference plays the next step of a script."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        system_instruction: str | None = None,
        admit_hidden: bool = False,
        chunk: int | None = None,
        **kwargs: Any,
    ) -> None:
        """Create the service.

        Args:
            script: The steps, one per inference; `extend` adds more later.
            system_instruction: The base system instruction (as on any LLM service).
            admit_hidden: Send calls to tools the context does not show to the service's
                handlers too (a real model can name a tool it was not given; the handlers answer
                it). By default such a call is refused here and never reaches a handler.
            chunk: Stream each sentence in pieces of at most this many characters, as a model
                streams its tokens (None: one frame per sentence).
            **kwargs: Passed to `LLMService` (e.g. `name`, `run_in_parallel`).

        """
        super().__init__(settings=_settings(system_instruction), **kwargs)
        self._script: list[ScriptItem] = _steps(script)
        self.admit_hidden = admit_hidden
        if chunk is not None and chunk < 1:
            raise ValueError(f"chunk must be at least 1 character, got {chunk}")
        self.chunk = chunk
        self.inferences: list[InferenceRecord] = []
        self._pending: dict[str, tuple[InferenceRecord, int]] = {}

    def extend(self, steps: Iterable[ScriptItem]) -> None:
        """Append steps to the script."""
        self._script.extend(_steps(steps))

    @property
    def remaining(self) -> int:
        """Steps not played yet."""
        return len(self._script)

    @property
    def calls(self) -> list[CallRecord]:
        """Every call attempted so far, across inferences."""
        return [call for inference in self.inferences for call in inference.calls]

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            await self._infer(frame.context, direction)
        else:
            await self.push_frame(frame, direction)

    async def push_frame(
        self, frame: Frame, direction: FrameDirection = FrameDirection.DOWNSTREAM
    ) -> None:
        # Results are broadcast through here; the downstream copy settles the record.
        if isinstance(frame, FunctionCallResultFrame) and direction == FrameDirection.DOWNSTREAM:
            self._settle(frame)
        await super().push_frame(frame, direction)

    async def _infer(self, context: LLMContext, direction: FrameDirection) -> None:
        seen = self._snapshot(context, direction)
        inference = InferenceRecord(seen=seen, scripted=bool(self._script))
        self.inferences.append(inference)
        said, calls = split_step(self._next_step(seen))
        await self.push_frame(LLMFullResponseStartFrame())
        await self._say(inference, said)
        await self.run_function_calls(self._admit(inference, calls, context))
        await self.push_frame(LLMFullResponseEndFrame())

    def _next_step(self, seen: ContextSnapshot) -> Step:
        if not self._script:
            return ()
        item = self._script.pop(0)
        if isinstance(item, FunctionStep):
            return item.fn(seen)
        if callable(item):
            return item(seen)
        return item

    async def _say(self, inference: InferenceRecord, text: str) -> None:
        inference.said = text
        for sentence in split_sentences(text):
            size = self.chunk or len(sentence)
            for start in range(0, len(sentence), size):
                await self.push_frame(LLMTextFrame(sentence[start : start + size]))

    def _admit(
        self, inference: InferenceRecord, calls: list[Call], context: LLMContext
    ) -> list[FunctionCallFromLLM]:
        admitted: list[FunctionCallFromLLM] = []
        for call in calls:
            call_id = call.tool_call_id or f"call_{inference.seen.index}_{len(inference.calls)}"
            visible = self.admit_hidden or call.name in inference.seen.tools
            record = CallRecord(
                name=call.name,
                args=dict(call.args),
                tool_call_id=call_id,
                outcome="pending" if visible else "refused",
            )
            inference.calls.append(record)
            if visible:
                self._pending[call_id] = (inference, len(inference.calls) - 1)
                admitted.append(FunctionCallFromLLM(call.name, call_id, dict(call.args), context))
        return admitted

    def _settle(self, frame: FunctionCallResultFrame) -> None:
        found = self._pending.get(frame.tool_call_id)
        if found is None:
            return
        inference, index = found
        is_final = frame.properties is None or frame.properties.is_final
        if is_final:
            del self._pending[frame.tool_call_id]
        outcome: CallOutcome = "error" if frame.error else ("ok" if is_final else "pending")
        inference.calls[index] = dataclasses.replace(
            inference.calls[index], outcome=outcome, result=frame.result
        )

    def _snapshot(self, context: LLMContext, direction: FrameDirection) -> ContextSnapshot:
        system = self._settings.system_instruction
        return ContextSnapshot(
            index=len(self.inferences),
            direction="upstream" if direction == FrameDirection.UPSTREAM else "downstream",
            messages=tuple(dict(m) for m in context.get_messages() if isinstance(m, dict)),
            tools=visible_tool_names(context),
            system=system if isinstance(system, str) else None,
        )


def visible_tool_names(context: LLMContext) -> tuple[str, ...]:
    """Names of the tools `context` advertises (standard and direct functions)."""
    tools = context.tools
    if isinstance(tools, Sequence):
        items: Sequence[Any] = tools
    else:
        items = getattr(tools, "standard_tools", ())
    return tuple(_tool_name(tool) for tool in items)


def _tool_name(tool: Any) -> str:
    return getattr(tool, "name", None) or getattr(tool, "__name__", repr(tool))


def _settings(system_instruction: str | None) -> LLMSettings:
    # Store-mode settings need every field set; a scripted model has no knobs.
    knobs = ("temperature", "max_tokens", "top_p", "top_k", "frequency_penalty")
    more = ("presence_penalty", "seed", "filter_incomplete_user_turns")
    values: dict[str, Any] = dict.fromkeys(knobs + more + ("user_turn_completion_config",))
    return LLMSettings(model="scripted", system_instruction=system_instruction, **values)


def _steps(script: Iterable[ScriptItem]) -> list[ScriptItem]:
    """The script's steps, each checked: a test's mistake is named where the script is written.

    One string is not a script (its letters would be read as steps, one per inference).
    """
    if isinstance(script, (str, bytes)):
        raise TypeError(f"a script is a list of steps, e.g. [Say({script!r})], not one string")
    steps = list(script)
    for index, step in enumerate(steps):
        if not (isinstance(step, FunctionStep) or callable(step) or is_step(step)):
            raise TypeError(
                f"script step {index}: {step!r} is not a step (Say, Call, text, a list of "
                "them, a FunctionStep or a callable of the context)"
            )
    return steps
