"""Names and texts for generated STAR data: the ordinary kind and the kind that breaks code.

The 12 local tasks name everything in ASCII snake case (``hotel_ask_date_from``, API field
``StartTimeHour``); the other tasks, and any STAR-format data, may not. So every name here is
drawn from the ordinary shapes and from Python keywords, the replay's and the engine's own
words (``said_*``, ``branch_*``, ``proc_*_done``, ``generic_sample``), names that differ only in
case or underscores, names with a leading digit, a hyphen or a space, and unicode.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]
Raw = dict[str, Any]

# Labels every STAR flowchart gives a fixed meaning: the entry, the shared replies, the
# branch labels and the API calls. An ordinary step never takes one of these names.
SHARED = ("hello", "anything_else", "out_of_scope", "custom", "goodbye_1", "goodbye_2")
BRANCHES = ("yes", "no", "available", "unavailable", "query_success", "query_failure")
OUTCOME_PAIRS = (("available", "unavailable"), ("query_success", "query_failure"))

# Words the replay and the engine use for their own variables, tools and expressions.
INTERNAL = [
    "said_ask_name",
    "said_",
    "branch_yes",
    "branch_",
    "proc_current_step",
    "proc_query_done",
    "proc_x_na",
    "current_step",
    "step",
    "main",
    "scope",
    "true",
    "false",
    "null",
    "and",
    "or",
    "not",
    "success",
    "found",
    "generic_sample",
    "correct_slot",
    "confirm_pending",
    "end_dialogue",
    "ask",
    "inform",
    "ask_",
    "_ask_",
    "__init__",
    "_",
    "__",
]
# Names of one thing spelt in ways a careless normaliser merges.
LOOKALIKES = [
    "ask_name",
    "Ask_Name",
    "ASK_NAME",
    "ask__name",
    "askname",
    "ask-name",
    "ask name",
    "ask.name",
    "2nd_ask",
    "42",
]
UNICODE_NAMES = ["météo", "ünï_ask_größe", "天气_ask_城市", "ask_ñame", "ﬁle", "İstanbul"]
KEYWORDS = [*keyword.kwlist, *keyword.softkwlist]

# Texts a caller or wizard may type that trip digit, case and word handling.
ODD_TEXTS = [
    "",
    " ",
    "\n",
    "²",
    "٣",
    "³rd",
    "½",
    "Ⅻ",
    "①",
    "🙂",
    "👍🏽 ok",
    "\u200b",
    "İ",
    "ß",
    "ﬁ",
    "yes",
    "no",
    "None",
    "True",
    "null",
    "{x}",
    "{name:s}",
    '"quoted"',
    'api.is_equal_to("x")',
    "back\\slash",
    "4 pm",
    "15th",
    "11:30 am",
    "I can't, sorry, unavailable",
]
VALUES = [
    "Tuesday",
    "Friday",
    "4 pm",
    "7 am",
    "15th",
    "15",
    "3",
    "0",
    "Old Town Inn",
    "One on Center Apartments",
    "O'Hare",
    "Zürich",
    "東京",
    "Ⅻ",
    "²",
    "٣",
    "🙂",
    " ",
    "None",
    "True",
    "null",
    "{x}",
    "a, b",
    "back\\slash",
    "11:30 am",
    "John Smith",
]

CHARACTER = st.characters(blacklist_categories=("Cs",))  # JSON in UTF-8 has no lone surrogates
TEXT = st.text(CHARACTER, max_size=16)
WORD = st.from_regex(r"[a-z]{1,7}", fullmatch=True)
IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,11}", fullmatch=True)
ODD = st.sampled_from([*INTERNAL, *LOOKALIKES, *UNICODE_NAMES, *KEYWORDS])

# A value never holds a double quote: STAR writes a constraint as ``"value"``.
VALUE = st.one_of(st.sampled_from(VALUES), TEXT.map(lambda t: t.replace('"', "")))
USER_TEXT = st.one_of(st.sampled_from(ODD_TEXTS), TEXT, VALUE.map(lambda v: f"it is {v}"))


def _is_special(label: str) -> bool:
    return label in SHARED or label in BRANCHES or label == "query" or label.startswith("query_")


@st.composite
def step_label(draw: Draw[Any], prefix: str) -> str:
    """An ask or inform label: ``<prefix>_ask_<word>`` as STAR names them, or an odd name."""
    kind = draw(st.sampled_from(["ask", "inform", "provide", "confirm"]))
    ordinary = st.builds(lambda w: f"{prefix}_{kind}_{w}", WORD)
    label = draw(st.one_of(ordinary, ordinary, st.just("ask_name"), IDENTIFIER, ODD, TEXT))
    return label if label and not _is_special(label) else f"{prefix}_ask_{label or 'x'}"


def _file_safe(name: str) -> bool:
    """Whether a task name makes a file name the loaders find (``tasks/<name>.json``)."""
    return (
        bool(name)
        and "/" not in name
        and "\x00" not in name
        and not name.startswith(".")
        and not name.endswith(".responses")
        and len(name.encode("utf-8")) < 100
    )


TASK_NAME = st.one_of(
    st.from_regex(r"[a-z]{2,8}_[a-z]{2,8}", fullmatch=True),  # STAR's own style
    IDENTIFIER,
    ODD,
    st.sampled_from(["hello", "query", "custom", "spaceship_life-support", "Weather", "weather"]),
    st.text(st.characters(whitelist_categories=("L", "N", "Pd", "Zs")), min_size=1, max_size=10),
).filter(_file_safe)

FIELD_NAME = st.one_of(
    st.from_regex(r"[A-Z][a-z]{1,6}([A-Z][a-z]{1,6}){0,2}", fullmatch=True),  # StartTimeHour
    st.sampled_from(["Name", "name", "NAME", "id", "Day", "RequestType", "APIName", "Message"]),
    IDENTIFIER,
    ODD,
)
