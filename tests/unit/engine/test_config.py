"""Config validation: every check names the config path and the fix."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pipecat_steward.core.slots import check_flow, compile_flow, load_flow_config
from pipecat_steward.exceptions import ConfigError, ExpressionError

from .flows import BELLA, TOY, toy


def errors(config: dict[str, Any], variables: tuple[str, ...] = ()) -> list[str]:
    return [str(e) for e in check_flow(load_flow_config(config), variables)]


def with_slot(**slot: Any) -> dict[str, Any]:
    config = copy.deepcopy(TOY)
    config["slots"].append({"name": "extra", "setter": "set_extra", **slot})
    return config


def test_the_seed_configs_are_valid() -> None:
    assert errors(TOY) == [] and errors(BELLA) == []


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (with_slot(name="date"), "slots[6].name: duplicate slot name 'date'"),
        (toy(**{"task:CheckAvailability": {"inputs": ["num_guests", "date_x"]}}),
         "tasks[0].inputs[1]: unknown slot 'date_x'; known: chosen_time, confirmation, date, name, num_guests, open_slots"),
        (toy(**{"task:CheckAvailability": {"outputs": {"open_slots": "nowhere"}}}), "tasks[0].outputs.open_slots: unknown slot 'nowhere'"),
        (with_slot(source="task:Missing", setter=None), "slots[6].source: no task named 'Missing' fills this slot"),
        (toy(**{"task:MakeReservation": {"requires": ["terms"]}}), "tasks[1].requires[0]: unknown slot 'terms'"),
        (with_slot(requires=["ghost"]), "slots[6].requires[0]: unknown slot 'ghost'"),
        (toy(**{"slot:num_guests": {"requires": ["date"]}, "slot:date": {"requires": ["num_guests"]}}),
         "slots[0].requires: circular requires: num_guests -> date -> num_guests; break the loop"),
        (with_slot(condition="lambda filled: int(filled.get('num_guests', 0) >= 5"), "slots[6].condition:"),
        (with_slot(condition="party >= 5"), "slots[6].condition: unknown name 'party'"),
        (with_slot(source="announce", setter=None), "slots[6].message: an announce slot needs a `message`"),
        (with_slot(source="announce", message="Hi"), "slots[6].setter: an announce slot has no setter; remove it"),
        (with_slot(setter=None), "slots[6].setter: user slot 'extra' needs a `setter` tool name"),
        (with_slot(ask="Hello {nobody}"), "slots[6].ask: unknown slot 'nobody'"),
        (with_slot(validate_against={"filled_slot": "times_x"}), "slots[6].validate_against.filled_slot: unknown slot 'times_x'"),
        (with_slot(setter="set_date"), "slots[1].setter_field: setter 'set_date' fills several slots"),
        (with_slot(setter="confirm_pending"), "slots[6].setter: 'confirm_pending' clashes with a task or steward tool"),
        (with_slot(source="telepathy"), "slots[6].source: unknown source 'telepathy'"),
        (toy(**{"task:CheckAvailability.on_failure": {"clear_slots": ["dat"]}}), "tasks[0].on_failure.clear_slots[0]: unknown slot 'dat'"),
    ],
)
def test_each_error_names_its_path(config: dict[str, Any], expected: str) -> None:
    found = errors(config)
    assert any(e.startswith(expected) for e in found), found


def test_condition_names_may_be_declared_variables() -> None:
    assert errors(with_slot(condition="vip == true"), ("vip",)) == []


def test_shape_errors_name_the_path() -> None:
    with pytest.raises(ConfigError) as info:
        load_flow_config({"slots": [{"name": "a", "setter": "s", "requires": "b", "bogus": 1}]})
    text = str(info.value)
    assert "slots[0].requires" in text and "slots[0].bogus" in text


def test_compile_reports_every_error_at_once() -> None:
    config = with_slot(requires=["ghost"], readback_fmt="lambda v: v")
    with pytest.raises(ConfigError) as info:
        compile_flow(config)
    text = str(info.value)
    assert "slots[6].requires[0]: unknown slot 'ghost'" in text
    assert "slots[6].readback_fmt: lambda readback formats are not executed" in text


def test_grammar_errors_carry_the_column() -> None:
    found = check_flow(load_flow_config(with_slot(condition="num_guests >= ")))
    assert isinstance(found[0], ExpressionError) and found[0].column > 0
    assert found[0].path == "slots[6].condition"
