"""Schemas and dialogues in SGD's format, written by hypothesis for fuzzing the replay.

``schemas`` writes services with unusual names (Python keywords, the replay's and the
engine's own words, names whose tool names clash) and ``dialogues`` writes dialogues of a
schema that keep SGD's invariants (see ``_Writer``); ``loose=True`` adds shapes that break
the README's rules. ``check_sgd_format`` asserts the rules a written dialogue keeps.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from hypothesis import strategies as st

from pipecat_steward.replay.sgd_data import NO_INTENT

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]
Raw = dict[str, Any]

# Names the replay or the engine use for their own slots, tasks, tools and text placeholders.
INTERNAL = [
    "intent",
    "goodbye",
    "EndDialogue",
    "end_dialogue",
    "set_goodbye",
    "replay_intent_2",
    "replay_goodbye_2",
    "confirmed_find_thing",
    "correct_slot",
    "confirm_pending",
    "reject_pending",
    "decline_slot",
    "dontcare",
    "value",
    "items",
    "question",
    "summary",
    "declined",
    "yes",
    "no",
    "success",
    "NONE",
]
# Intent names whose tool names clash with each other or with the engine's own tools.
INTENT_WORDS = [
    "FindThing",
    "findThing",
    "Find_thing",
    "EndDialogue",
    "SetGoodbye",
    "CorrectSlot",
    "ConfirmPending",
    "RejectPending",
    "DeclineSlot",
    "Intent",
    "Goodbye",
    "End",
    "None",
    "True",
    "class",
    "lambda",
]
TRICKY_VALUES = [
    "dontcare",
    "a, b",
    'say "hi"',
    "O'Hare",
    "back\\slash",
    "Zürich",
    "東京",
    "🙂",
    " ",
    "-",
    "0",
    "None",
    "True",
    "null",
    "NONE",
    "{x}",
    "{}",
    "yes",
    "no",
    "1,000",
    "11:30 am",
    "half past 11 in the morning",
]

IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,11}", fullmatch=True)
SLOT_NAME = st.one_of(
    IDENTIFIER, st.sampled_from([*keyword.kwlist, *keyword.softkwlist, *INTERNAL])
)
INTENT_NAME = st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,11}", fullmatch=True),
    st.sampled_from(INTENT_WORDS),
).filter(lambda name: name != NO_INTENT)  # NONE means "no active intent" in SGD
SERVICE_NAME = st.one_of(
    st.from_regex(r"[A-Z][a-z]{1,8}_[0-9]{1,2}", fullmatch=True),  # SGD's own style
    IDENTIFIER,
    st.sampled_from(["intent", "goodbye", "Toy_1", "None", "set"]),
)
CHARACTER = st.characters(blacklist_categories=("Cs", "Cc"))
TEXT = st.text(CHARACTER, max_size=12)
VALUE = st.one_of(st.sampled_from(TRICKY_VALUES), TEXT.filter(bool))
USER_TURNS = st.integers(1, 10)
USER_ACTS = ["NEGATE", "THANK_YOU", "REQUEST_ALTS", "SELECT", "GOODBYE", "AFFIRM_INTENT"]
SYSTEM_ACTS = ["REQ_MORE", "NOTIFY_SUCCESS", "NOTIFY_FAILURE", "GOODBYE"]


# --- schemas -------------------------------------------------------------------------------


@st.composite
def _slot(draw: Draw[Any], name: str) -> Raw:
    categorical = draw(st.booleans())
    values = draw(st.lists(VALUE, min_size=int(categorical), max_size=4, unique=True))
    description = draw(st.one_of(TEXT, st.just("Use {name} or {value} here")))
    return {
        "name": name,
        "description": description,
        "is_categorical": categorical,
        "possible_values": values,
    }


def _default(slot: Raw) -> st.SearchStrategy[str]:
    # The README: "An empty default value allows that slot to take any value by default".
    own = st.sampled_from(slot["possible_values"]) if slot["is_categorical"] else VALUE
    return st.one_of(own, st.sampled_from(["dontcare", "", "None"]))


@st.composite
def _intent(draw: Draw[Any], name: str, slots: list[Raw]) -> Raw:
    names = [s["name"] for s in slots]
    required = draw(st.lists(st.sampled_from(names), unique=True))
    rest = [s for s in slots if s["name"] not in required]
    chosen = draw(st.lists(st.sampled_from(rest), unique_by=lambda s: s["name"])) if rest else []
    return {
        "name": name,
        "description": draw(TEXT),
        "is_transactional": draw(st.booleans()),
        "required_slots": required,
        "optional_slots": {s["name"]: draw(_default(s)) for s in chosen},
        "result_slots": draw(st.lists(st.sampled_from(names), unique=True)),
    }


@st.composite
def _service(draw: Draw[Any], name: str, shared_intents: list[str]) -> Raw:
    slot_names = draw(st.lists(SLOT_NAME, min_size=1, max_size=6, unique=True))
    slots = [draw(_slot(n)) for n in slot_names]
    # Shared names (several services with one intent name, as Restaurants_1 and _2 in SGD) and
    # the intent whose tool is the service's setter (``SetToy_1`` → ``set_toy_1``).
    intent_name = st.one_of(INTENT_NAME, st.sampled_from(shared_intents), st.just(f"Set{name}"))
    intents = draw(st.lists(intent_name, min_size=1, max_size=4, unique=True))
    return {
        "service_name": name,
        "description": draw(TEXT),
        "slots": slots,
        "intents": [draw(_intent(i, slots)) for i in intents],
    }


@st.composite
def schemas(draw: Draw[Any], max_services: int = 3) -> dict[str, Raw]:
    """A split's schema: one to ``max_services`` services by name."""
    names = draw(st.lists(SERVICE_NAME, min_size=1, max_size=max_services, unique=True))
    shared = draw(st.lists(INTENT_NAME, min_size=1, max_size=3, unique=True))
    return {n: draw(_service(n, shared)) for n in names}


# --- dialogues -----------------------------------------------------------------------------


@dataclass
class _Track:
    """One service's gold state as the writer builds it."""

    intent: str = NO_INTENT
    values: dict[str, list[str]] = field(default_factory=lambda: {})
    canonical: dict[str, str] = field(default_factory=lambda: {})
    """Slot → the canonical form the actions gave its value."""


@dataclass
class _Utterance:
    """A turn's words, built piece by piece with the character spans of slot values."""

    parts: list[str] = field(default_factory=lambda: [])
    length: int = 0

    def say(self, text: str) -> tuple[int, int]:
        start = self.length + (1 if self.parts else 0)
        self.parts.append(text)
        self.length = start + len(text)
        return start, self.length

    @property
    def text(self) -> str:
        return " ".join(self.parts)


class _Writer:
    """Writes one SGD dialogue turn by turn from hypothesis draws."""

    def __init__(self, draw: Draw[Any], schema: Mapping[str, Raw], loose: bool) -> None:
        self.draw = draw
        self.schema = schema
        self.loose = loose
        self.tracks: dict[str, _Track] = {}
        self.offers: dict[tuple[str, str], tuple[str, str]] = {}
        """(service, slot) → (surface, canonical) the last system turn offered or restated."""

    def dialogue(self, dialogue_id: str, services: list[str], user_turns: int) -> Raw:
        turns: list[Raw] = []
        current = services[0]
        for _ in range(user_turns):
            following = self._next_service(current, services)
            in_turn = [current] if following == current else [current, following]
            turns.append(self._user_turn(self.draw(st.permutations(in_turn))))
            current = following
            turns.append(self._system_turn(self._system_service(current)))
        framed = list(dict.fromkeys(f["service"] for t in turns for f in t["frames"]))
        if self.loose and self.draw(st.booleans()):
            turns.pop()  # the dialogue ends on the caller's words
        return {"dialogue_id": dialogue_id, "services": self._listed(framed), "turns": turns}

    def _next_service(self, current: str, services: list[str]) -> str:
        others = [s for s in services if s != current]
        if others and self.draw(st.integers(0, 4)) == 0:
            return self.draw(st.sampled_from(others))
        return current

    def _system_service(self, current: str) -> str:
        if self.loose and self.draw(st.integers(0, 5)) == 0:
            return self.draw(st.sampled_from(sorted(self.schema)))
        return current

    def _listed(self, framed: list[str]) -> list[str]:
        if not self.loose:
            return framed
        listed = self.draw(st.lists(st.sampled_from(framed), unique=True))
        others = self.draw(st.lists(st.sampled_from(sorted(self.schema)), unique=True))
        return list(dict.fromkeys([*listed, *others]))

    # --- user turns ---

    def _user_turn(self, services: list[str]) -> Raw:
        said = _Utterance()
        before = {s: dict(self.tracks.get(s, _Track()).values) for s in services}
        frames = [self._user_frame(s, said, before) for s in services]
        self.offers.clear()
        return {"speaker": "USER", "utterance": said.text, "frames": frames}

    def _user_frame(
        self, service: str, said: _Utterance, before: Mapping[str, Mapping[str, list[str]]]
    ) -> Raw:
        track = self.tracks.setdefault(service, _Track())
        actions: list[Raw] = []
        spans: list[Raw] = []
        if not track.values:
            self._carry_over(service, track, before)
        self._choose_intent(track, self.schema[service], actions, said)
        for _ in range(self.draw(st.integers(0, 3))):
            self._edit(service, track, actions, spans, said)
        for act in self.draw(st.lists(st.sampled_from([*USER_ACTS, "AFFIRM"]), max_size=2)):
            actions.append(sgd_action(act))
        requested = self.draw(
            st.lists(st.sampled_from(slot_names(self.schema[service])), max_size=2, unique=True)
        )
        actions += [sgd_action("REQUEST", slot) for slot in requested]
        state = {
            "active_intent": track.intent,
            "requested_slots": requested,
            "slot_values": {k: list(v) for k, v in track.values.items()},
        }
        return {"service": service, "actions": actions, "slots": spans, "state": state}

    def _carry_over(
        self, service: str, track: _Track, before: Mapping[str, Mapping[str, list[str]]]
    ) -> None:
        """Values carried over from another service of the dialogue (no act states them)."""
        carried = [v for s, values in before.items() if s != service for v in values.values()]
        carried += [v for s, t in self.tracks.items() if s != service for v in t.values.values()]
        informable = informable_slots(self.schema[service])
        if not carried or not informable or self.draw(st.integers(0, 2)):
            return
        for slot in self.draw(st.lists(st.sampled_from(informable), max_size=2, unique=True)):
            if not is_categorical(self.schema[service], slot):
                track.values[slot] = list(self.draw(st.sampled_from(carried)))
                track.canonical.pop(slot, None)

    def _choose_intent(
        self, track: _Track, service: Raw, actions: list[Raw], said: _Utterance
    ) -> None:
        choice = self.draw(st.sampled_from(["keep", "keep", "keep", "start", "none"]))
        if choice == "none":
            track.intent = NO_INTENT
        elif choice == "start" or track.intent == NO_INTENT:
            # A new intent instance, possibly of the intent already active (a second search).
            track.intent = self.draw(st.sampled_from([i["name"] for i in service["intents"]]))
            actions.append(sgd_action("INFORM_INTENT", "intent", [track.intent], [track.intent]))
            said.say(track.intent)
            if track.values and self.draw(st.integers(0, 3)) == 0:
                kept = self.draw(st.lists(st.sampled_from(sorted(track.values)), unique=True))
                track.values = {k: v for k, v in track.values.items() if k in kept}
                track.canonical = {k: v for k, v in track.canonical.items() if k in kept}

    def _edit(
        self, service: str, track: _Track, actions: list[Raw], spans: list[Raw], said: _Utterance
    ) -> None:
        schema = self.schema[service]
        informable = informable_slots(schema)
        if not informable:
            return
        slot = self.draw(st.sampled_from(informable))
        offered = self.offers.get((service, slot))
        categorical = is_categorical(schema, slot)
        if offered and slot in track.values and not categorical and self.draw(st.booleans()):
            # A spoken variant of the value, as the system restated it (a categorical list
            # holds one value).
            variants = track.values[slot]
            if offered[0] not in variants:
                variants.insert(self.draw(st.integers(0, len(variants))), offered[0])
            return
        if offered and self.draw(st.booleans()):
            track.values[slot] = [offered[0]]  # the caller accepts the offer without naming it
            track.canonical[slot] = offered[1]
            actions.append(sgd_action("SELECT"))
            return
        surface, canonical = self._value(schema, slot)
        track.values[slot] = [surface]
        track.canonical[slot] = canonical
        actions.append(sgd_action("INFORM", slot, [surface], [canonical]))
        start, end = said.say(surface)
        if not categorical:
            spans.append({"slot": slot, "start": start, "exclusive_end": end})

    def _value(self, schema: Raw, slot: str) -> tuple[str, str]:
        """A spoken value and its canonical form (one of the possible values when categorical)."""
        spec = next(s for s in schema["slots"] if s["name"] == slot)
        if spec["is_categorical"]:
            value = self.draw(st.sampled_from([*spec["possible_values"], "dontcare"]))
            return value, value
        surface = self.draw(VALUE)
        return surface, self.draw(st.one_of(st.just(surface), VALUE))

    # --- system turns ---

    def _system_turn(self, service: str) -> Raw:
        schema = self.schema[service]
        track = self.tracks.get(service, _Track())
        said = _Utterance()
        actions: list[Raw] = []
        spans: list[Raw] = []
        for _ in range(self.draw(st.integers(0, 2))):
            self._offer(service, track, actions, spans, said)
        actions += [
            sgd_action(a) for a in self.draw(st.lists(st.sampled_from(SYSTEM_ACTS), max_size=2))
        ]
        frame: Raw = {"service": service, "actions": actions, "slots": spans}
        if self.draw(st.integers(0, 2)) == 0:
            frame["service_call"] = self._call(schema, track)
            frame["service_results"] = self.draw(
                st.lists(st.dictionaries(st.sampled_from(slot_names(schema)), VALUE), max_size=2)
            )
        said.say(self.draw(TEXT))
        return {"speaker": "SYSTEM", "utterance": said.text, "frames": [frame]}

    def _offer(
        self, service: str, track: _Track, actions: list[Raw], spans: list[Raw], said: _Utterance
    ) -> None:
        """Offer a value, or restate a value of the state in other words (CONFIRM)."""
        schema = self.schema[service]
        act = self.draw(st.sampled_from(["OFFER", "CONFIRM", "INFORM", "REQUEST", "OFFER_INTENT"]))
        if act == "OFFER_INTENT":
            intent = self.draw(st.sampled_from([i["name"] for i in schema["intents"]]))
            actions.append(sgd_action(act, "intent", [intent], [intent]))
            return
        slot = self.draw(st.sampled_from(slot_names(schema)))
        if act == "REQUEST":
            actions.append(sgd_action(act, slot))
            return
        surface, canonical = self._value(schema, slot)
        if act == "CONFIRM" and slot in track.canonical and not is_categorical(schema, slot):
            canonical = track.canonical[slot]  # other words for the value the state holds
        actions.append(sgd_action(act, slot, [surface], [canonical]))
        self.offers[(service, slot)] = (surface, canonical)
        start, end = said.say(surface)
        if not is_categorical(schema, slot):
            spans.append({"slot": slot, "start": start, "exclusive_end": end})

    def _call(self, schema: Raw, track: _Track) -> Raw:
        """A call of the active intent (mostly, as SGD's system makes) or of another one."""
        intents = schema["intents"]
        if self.loose:
            intents = [i for s in self.schema.values() for i in s["intents"]]
        active = [i for i in schema["intents"] if i["name"] == track.intent]
        intent = self.draw(st.sampled_from(active * 2 + intents))
        parameters: dict[str, str] = {}
        for slot in [*intent["required_slots"], *intent["optional_slots"]]:
            if slot in track.values:
                parameters[slot] = track.canonical.get(slot, track.values[slot][0])
            elif slot in intent["optional_slots"] and self.draw(st.booleans()):
                parameters[slot] = intent["optional_slots"][slot]
        dropped = self.draw(st.lists(st.sampled_from(sorted(parameters) or [""]), max_size=1))
        return {
            "method": intent["name"],
            "parameters": {k: v for k, v in parameters.items() if k not in dropped},
        }


def sgd_action(
    act: str, slot: str = "", values: list[str] | None = None, canonical: list[str] | None = None
) -> Raw:
    return {
        "act": act,
        "slot": slot,
        "values": values or [],
        "canonical_values": canonical if canonical is not None else list(values or []),
    }


def slot_names(schema: Raw) -> list[str]:
    return [s["name"] for s in schema["slots"]]


def informable_slots(schema: Raw) -> list[str]:
    """Slots the state may hold: required or optional slots of an intent (the README)."""
    names = {s for i in schema["intents"] for s in [*i["required_slots"], *i["optional_slots"]]}
    return sorted(names)


def is_categorical(schema: Raw, slot: str) -> bool:
    return any(s["name"] == slot and s["is_categorical"] for s in schema["slots"])


@st.composite
def dialogues(
    draw: Draw[Any],
    schema: Mapping[str, Raw],
    user_turns: st.SearchStrategy[int] = USER_TURNS,
    loose: bool = False,
) -> Raw:
    """One dialogue over one to three of ``schema``'s services, as JSON would give it."""
    services = draw(st.lists(st.sampled_from(sorted(schema)), min_size=1, max_size=3, unique=True))
    dialogue_id = draw(st.one_of(st.from_regex(r"[0-9]{1,3}_[0-9]{5}", fullmatch=True), TEXT))
    raw = _Writer(draw, schema, loose).dialogue(dialogue_id, services, draw(user_turns))
    return json.loads(json.dumps(raw))  # what reading the split's files would give
