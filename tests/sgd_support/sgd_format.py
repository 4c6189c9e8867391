"""SGD's format rules that generated dialogues keep, as assertions (``check_sgd_format``).

The dataset's README and the habits of its dev files: the fuzzer's writer promises them, and
the real fixture dialogues keep them.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.sgd_support.dialogues import Raw, informable_slots, is_categorical, slot_names

from pipecat_steward.replay.sgd_data import NO_INTENT


def check_sgd_format(schema: Mapping[str, Raw], raw: Raw) -> None:
    """Assert the README's rules (and the dev files' habits) that ``_Writer`` keeps.

    USER and SYSTEM alternate from a USER turn to a SYSTEM one; a user turn has one frame per
    service, two only where the service changes; the system turn after it has one frame, of
    one of those services, whose call is an intent of that service with its slots.
    """
    turns = raw["turns"]
    assert [t["speaker"] for t in turns] == ["USER", "SYSTEM"] * (len(turns) // 2)
    assert set(raw["services"]) == {f["service"] for t in turns for f in t["frames"]}
    states: dict[str, Mapping[str, list[str]]] = {}
    for user, system in zip(turns[::2], turns[1::2], strict=True):
        services = [f["service"] for f in user["frames"]]
        assert 1 <= len(services) == len(set(services)) <= 2
        for frame in user["frames"]:
            _check_user_frame(schema[frame["service"]], frame, user["utterance"], states)
        assert len(system["frames"]) == 1 and system["frames"][0]["service"] in services
        _check_system_frame(schema[system["frames"][0]["service"]], system)


def _check_user_frame(
    service: Raw, frame: Raw, utterance: str, states: dict[str, Mapping[str, list[str]]]
) -> None:
    state = frame["state"]
    intents = {i["name"] for i in service["intents"]}
    assert state["active_intent"] in {NO_INTENT, *intents}
    assert set(state["slot_values"]) <= set(informable_slots(service))
    assert set(state["requested_slots"]) <= set(slot_names(service))
    for slot, values in state["slot_values"].items():
        assert values and len(values) == len(set(values)), (slot, values)
        spec = next(s for s in service["slots"] if s["name"] == slot)
        if spec["is_categorical"]:
            assert len(values) == 1 and values[0] in [*spec["possible_values"], "dontcare"]
    acts = {a["act"] for a in frame["actions"]}
    dropped = set(states.get(frame["service"], {})) - set(state["slot_values"])
    assert not dropped or "INFORM_INTENT" in acts, "values drop only when an intent starts"
    states[frame["service"]] = state["slot_values"]
    _check_actions_and_spans(service, frame, utterance)


def _check_system_frame(service: Raw, turn: Raw) -> None:
    frame = turn["frames"][0]
    _check_actions_and_spans(service, frame, turn["utterance"])
    assert ("service_call" in frame) == ("service_results" in frame)
    if "service_call" in frame:
        call = frame["service_call"]
        intent = next(i for i in service["intents"] if i["name"] == call["method"])
        assert set(call["parameters"]) <= {*intent["required_slots"], *intent["optional_slots"]}
        assert all(isinstance(v, str) for v in call["parameters"].values())


def _check_actions_and_spans(service: Raw, frame: Raw, utterance: str) -> None:
    for action in frame["actions"]:
        assert len(action["values"]) == len(action["canonical_values"]), action
    for span in frame["slots"]:
        assert span["slot"] in slot_names(service) and not is_categorical(service, span["slot"])
        assert 0 <= span["start"] < span["exclusive_end"] <= len(utterance), span
