"""The fakes a user tests with refuse a mistaken script or setting where it is written.

``ScriptedLLM("Hello")`` played "H", "e", "l" … one letter per inference; ``Say(None)`` and a
step that is no step failed inside the pipeline, far from the test that wrote them; and
``TextPipeline(turn_end_s=-1)`` or ``pipeline.say(None)`` failed in pipecat's aggregator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pipecat_steward.exceptions import ConfigError
from pipecat_steward.testing import Call, FunctionStep, Say, ScriptedLLM, TextPipeline

REFUSED: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("a script that is one string", lambda: ScriptedLLM("Hello"), TypeError, "not one string"),
    ("a number as a step", lambda: ScriptedLLM([1]), TypeError, "script step 0: 1 is not a step"),
    ("None as a step", lambda: ScriptedLLM([Say("a"), None]), TypeError, "script step 1"),
    ("a list with a number", lambda: ScriptedLLM([[Say("a"), 2]]), TypeError, "script step 0"),
    ("extend with a string", lambda: ScriptedLLM().extend("Hello"), TypeError, "not one string"),
    ("Say without text", lambda: Say(None), TypeError, "Say takes text"),  # type: ignore[arg-type]
    ("Say with a number", lambda: Say(5), TypeError, "Say takes text"),  # type: ignore[arg-type]
    ("Call without a name", lambda: Call(""), TypeError, "Call takes a tool name"),
    ("Call with list args", lambda: Call("t", [1]), TypeError, "args as a mapping"),  # type: ignore[arg-type]
    ("Call with a numeric id", lambda: Call("t", {}, 7), TypeError, "tool_call_id"),  # type: ignore[arg-type]
    ("a negative turn end", lambda: _pipeline(turn_end_s=-1), ConfigError, "turn_end_s"),
    ("a turn end as text", lambda: _pipeline(turn_end_s="0.1"), ConfigError, "turn_end_s"),
    (
        "a NaN speech pace",
        lambda: _pipeline(secs_per_word=float("nan")),
        ConfigError,
        "secs_per_word",
    ),
]


def _pipeline(**options: Any) -> TextPipeline:
    return TextPipeline(ScriptedLLM([Say("Hi.")]), **options)


@pytest.mark.parametrize(("name", "make", "error", "says"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_mistake_is_refused_where_it_is_written(
    name: str, make: Callable[[], object], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        make()


def test_every_kind_of_step_is_taken() -> None:
    llm = ScriptedLLM(
        [
            "Hello.",
            Say("Hi."),
            Call("t", {"a": 1}),
            [Say("x"), Call("t")],
            FunctionStep(lambda _: "y"),
        ]
    )
    llm.extend([lambda _: "z", ()])
    assert llm.remaining == 7


async def test_the_caller_says_text() -> None:
    async with _pipeline(turn_end_s=0) as pipeline:
        with pytest.raises(TypeError, match="the caller says text, not None"):
            await pipeline.say(None)  # type: ignore[arg-type]
        await pipeline.say("hello")
        await pipeline.settle()
        assert pipeline.spoken == ["Hi."]
