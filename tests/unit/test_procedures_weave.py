"""Weaving markers into an author's prompt: strip-compare, preserved blocks, reconciled names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipecat_steward.core.procedures.blocks import scan, strip_markers, structural_markers
from pipecat_steward.core.procedures.weave import (
    WeaveAccepted,
    WeaveRefused,
    check_weave,
    prose_drift,
)

PROSE = (
    "You are the desk of a small clinic.\n"
    "\n"
    "Ask for the caller's name and date of birth.\n"
    "Call find_patient with them.\n"
    "Take the copay with collect_payment once they agree.\n"
)

WOVEN = (
    "You are the desk of a small clinic.\n"
    "\n"
    "{{#step identify}}\n"
    "Ask for the caller's name and date of birth.\n"
    "{{/step}}\n"
    "{{#step lookup}}\n"
    "Call find_patient with them.\n"
    "{{/step}}\n"
    "{{#step pay}}\n"
    "Take the copay with collect_payment once they agree.\n"
    "{{/step}}\n"
)


def test_strip_gives_back_the_prose() -> None:
    assert strip_markers(WOVEN) == PROSE


def test_strip_keeps_pills_references_and_bad_names() -> None:
    text = "Call {{TOOL:x}} then {{PROCEDURE:g}}.\n{{#step 9bad}}\nkeep\n"
    assert strip_markers(text) == text


def test_inline_markers_strip_without_their_line() -> None:
    assert strip_markers("a {{#step s}}b{{/step}} c\n") == "a b c\n"


def test_clean_weave_is_accepted() -> None:
    result = check_weave(PROSE, WOVEN)
    assert isinstance(result, WeaveAccepted)
    assert result.prompt == WOVEN
    assert result.new_steps == ("identify", "lookup", "pay")


@pytest.mark.parametrize(
    ("woven", "needle"),
    [
        (WOVEN.replace("date of birth", "birthday"), "line 3"),
        (WOVEN.replace("{{/step}}\n{{#step pay}}\n", "{{/step}}\n\n{{#step pay}}\n"), "line 5"),
        (WOVEN + "Always be polite.\n", "added after"),
        (WOVEN.replace("Take the copay with collect_payment once they agree.\n", ""), "missing"),
        (WOVEN.replace("Call find_patient", "Call {{TOOL:find_patient}}"), "line 4"),
        (WOVEN.replace("{{#step pay}}", "{{#step Pay-Now}}"), "line"),
    ],
)
def test_prose_drift_is_refused_with_the_place(woven: str, needle: str) -> None:
    result = check_weave(PROSE, woven)
    assert isinstance(result, WeaveRefused)
    assert needle in result.reason


def test_unchanged_prompt_without_blocks_is_refused() -> None:
    result = check_weave(PROSE, PROSE)
    assert isinstance(result, WeaveRefused) and "no {{#step" in result.reason


def test_nested_step_is_refused() -> None:
    woven = WOVEN.replace("{{/step}}\n{{#step lookup}}\n", "{{#step lookup}}\n")
    result = check_weave(PROSE, woven)
    assert isinstance(result, WeaveRefused) and "nested_step" in result.reason


AUTHORED = (
    "Greet the caller.\n"
    "{{#procedure intake}}\n"
    "{{#step ask_name}}\n"
    "Ask the caller's name.\n"
    "{{/step}}\n"
    "Ask why they call.\n"
    "{{/procedure}}\n"
    "Say goodbye.\n"
)


def test_existing_blocks_are_kept_and_new_ones_added() -> None:
    woven = AUTHORED.replace(
        "Ask why they call.\n", "{{#step reason}}\nAsk why they call.\n{{/step}}\n"
    )
    result = check_weave(AUTHORED, woven)
    assert isinstance(result, WeaveAccepted)
    assert result.new_steps == ("reason",)
    assert {s.id: s.group for s in scan(result.prompt).steps} == {
        "ask_name": "intake",
        "reason": "intake",
    }


@pytest.mark.parametrize(
    "woven",
    [
        AUTHORED.replace("{{#step ask_name}}\n", "").replace("{{/step}}\n", "", 1),  # removed
        AUTHORED.replace(
            "{{/step}}\nAsk why they call.\n", "Ask why they call.\n{{/step}}\n"
        ),  # grown
        AUTHORED.replace("{{#procedure intake}}\n", "").replace(
            "{{/procedure}}\n", ""
        ),  # group gone
    ],
)
def test_changing_an_authored_block_is_refused(woven: str) -> None:
    assert strip_markers(woven) == strip_markers(AUTHORED)  # the prose alone would pass
    assert isinstance(check_weave(AUTHORED, woven), WeaveRefused)


def test_renamed_group_and_step_are_reconciled_to_the_authors_names() -> None:
    woven = (
        AUTHORED.replace("{{#procedure intake}}", "{{#procedure patient_intake}}")
        .replace("{{#step ask_name}}", "{{#step get_name}}")
        .replace("Ask why they call.\n", "{{#step reason}}\nAsk why they call.\n{{/step}}\n")
    )
    result = check_weave(AUTHORED, woven)
    assert isinstance(result, WeaveAccepted)
    assert [(r.kind, r.proposed, r.original) for r in result.renamed] == [
        ("procedure", "patient_intake", "intake"),
        ("step", "get_name", "ask_name"),
    ]
    assert "{{#procedure intake}}" in result.prompt and "patient_intake" not in result.prompt
    assert result.new_steps == ("reason",) and result.new_groups == ()


def test_a_group_whose_name_contains_its_keyword_is_renamed_exactly() -> None:
    authored = "{{#procedure p}}\nDo it.\n{{/procedure}}\n"
    woven = "{{#procedure proc}}\n{{#step do}}\nDo it.\n{{/step}}\n{{/procedure}}\n"
    result = check_weave(authored, woven)
    assert isinstance(result, WeaveAccepted)
    assert result.prompt.startswith("{{#procedure p}}\n{{#step do}}")


def test_drift_reason_names_the_first_difference() -> None:
    assert prose_drift("a\nb\n", "a\nb\n") is None
    reason = prose_drift("a\nb\n", "a\nc\n")
    assert reason is not None and "line 2" in reason and "'b\\n'" in reason


_LINE = st.text(
    st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="{}\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    max_size=20,
)


@st.composite
def _weaves(draw: st.DrawFn) -> tuple[str, str]:
    lines = draw(st.lists(_LINE, min_size=1, max_size=8))
    prose = "".join(line + "\n" for line in lines)
    out: list[str] = []
    for i, line in enumerate(lines):
        wrap = draw(st.booleans())
        out.append(f"{{{{#step s{i}}}}}\n{line}\n{{{{/step}}}}\n" if wrap else line + "\n")
    return prose, "".join(out)


@given(_weaves())
def test_any_marker_only_weave_strips_back(case: tuple[str, str]) -> None:
    prose, woven = case
    assert strip_markers(woven) == prose
    result = check_weave(prose, woven)
    assert isinstance(result, WeaveAccepted) or "no {{#step" in result.reason


@given(_weaves(), st.data())
def test_any_prose_edit_is_refused(case: tuple[str, str], data: st.DataObject) -> None:
    prose, woven = case
    markers = structural_markers(woven)
    spans = [(m.start, m.end) for m in markers]
    free = [i for i in range(len(woven)) if not any(a <= i < b for a, b in spans)]
    at = data.draw(st.sampled_from(free))
    edited = woven[:at] + data.draw(st.sampled_from(["", "x", woven[at] * 2])) + woven[at + 1 :]
    if strip_markers(edited) == prose:
        return  # the edit rebuilt the same prose (e.g. doubled a char the deletion removed)
    assert isinstance(check_weave(prose, edited), WeaveRefused)
