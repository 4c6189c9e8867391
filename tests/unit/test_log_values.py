"""The text values of a log line, as pipecat prints them, masked: a streamed piece whole."""

from __future__ import annotations

import pytest

from pipecat_steward.core.redaction import PLACEHOLDER
from pipecat_steward.pipecat.log_values import mask_text_values

X = PLACEHOLDER


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        # Streamed pieces, in each of pipecat's formats: the whole text.
        (
            "Pushing LLMTextFrame#12(pts: None, text: [opal]) downstream from A#0 to B#0",
            f"Pushing LLMTextFrame#12(pts: None, text: [{X}]) downstream from A#0 to B#0",
        ),
        (
            "Pushing TTSTextFrame#3(pts: 1, text: [ 411]) downstream from A#0 to B#0",
            f"Pushing TTSTextFrame#3(pts: 1, text: [{X}]) downstream from A#0 to B#0",
        ),
        (
            "A#0 → B#0: LLMTextFrame id: 7, name: 'LLMTextFrame#7', text: 'tig' at 0.10s",
            f"A#0 → B#0: LLMTextFrame id: 7, name: '{X}', text: '{X}' at 0.10s",
        ),
        (
            '🧠 A#0 → LLM GENERATING: "it\'s 41" at 1.25s',
            f'🧠 A#0 → LLM GENERATING: "{X}" at 1.25s',
        ),
        # Other text values: their numbers, written or said, however few.
        (
            "TranscriptionFrame#4(user: u, text: [table for four at 7], language: None)",
            f"TranscriptionFrame#4(user: u, text: [table for {X} at {X}], language: None)",
        ),
        ("heard 'room 12, floor 3' at 2.50s", f"heard 'room {X}, floor {X}' at 2.50s"),
        ("escaped 'it\\'s 12' and '7'", f"escaped 'it\\'s {X}' and '{X}'"),
        # No text value: nothing changes.
        ("LLMUserAggregator#0: User started speaking at 12.5s", None),
        ("Generating TTS [table for 4 at 7:30]", None),
        ("", None),
    ],
)
def test_each_text_value_of_a_line_is_masked(line: str, masked: str | None) -> None:
    assert mask_text_values(line) == (line if masked is None else masked)
