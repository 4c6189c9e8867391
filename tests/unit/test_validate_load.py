"""``steward validate`` = the one loading path + cross-checks: a table of authoring mistakes.

Each case mutates a copy of a shipped bot and names the config path validate must report. A
case marked ``load`` must also make loading fail (the runtime rejects it), with the same path.
"""

from __future__ import annotations

import tests.pipecat_support  # noqa: F401  (quiets pipecat's import-time warnings first)

# isort: split

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.cli.main import main
from pipecat_steward.cli.validate import validate_agent
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.pipecat.steward import Steward

BOTS = Path(__file__).parents[2] / "bots"
Mutate = Callable[[dict[str, Any]], None]


def copy_bot(tmp_path: Path, bot: str, mutate: Mutate) -> Path:
    folder = tmp_path / bot
    shutil.copytree(BOTS / bot, folder, ignore=shutil.ignore_patterns("scenarios", "__pycache__"))
    data = yaml.safe_load((folder / "agent.yaml").read_text())
    mutate(data)
    (folder / "agent.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def slot(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in data["flow"]["slots"] if s["name"] == name)


def task(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in data["flow"]["tasks"] if t["name"] == name)


def _set(target: Callable[[dict[str, Any]], dict[str, Any]], key: str, value: object) -> Mutate:
    return lambda d: target(d).__setitem__(key, value)


def _cycle(d: dict[str, Any]) -> None:
    task(d, "FindAvailableTimes")["requires"] = ["confirmation"]


def _duplicate_variable(d: dict[str, Any]) -> None:
    d["variables"].append(dict(d["variables"][1]))


def _duplicate_step(d: dict[str, Any]) -> None:
    d["procedure"]["steps"].append({"id": "summary", "title": "again"})


def _expects_unknown(d: dict[str, Any]) -> None:
    d["procedure"]["steps"][5]["expects"] = ["copay_consnt"]


def _odd_key(mapping: dict[Any, Any], key: object) -> None:
    """YAML allows keys that are not text (``1: x``, ``null: x``)."""
    mapping[key] = "x"


def _intent(key: str, value: object) -> Mutate:
    return lambda d: d["intents"][0].__setitem__(key, value)


CASES: list[tuple[str, str, Mutate, str, bool]] = [
    # (id, bot, mutation, path validate reports, loading rejects too)
    (
        "setter typo",
        "bella_notte",
        _set(lambda d: slot(d, "contact_phone"), "setter", "set_fone"),
        "flow.slots[3].setter",
        False,
    ),
    (
        "task tool typo",
        "bella_notte",
        _set(lambda d: task(d, "FindAvailableTimes"), "tool", "find_available_tims"),
        "flow.tasks[0].tool",
        False,
    ),
    (
        "then tool typo",
        "bella_notte",
        _set(lambda d: slot(d, "party_size")["validation"]["on_exhaust"], "then", "escalat"),
        "flow.slots[1].validation.on_exhaust.then",
        False,
    ),
    (
        "then call tool typo",
        "lead_capture",
        lambda d: d["flow"]["slots"][-1]["validation"]["on_exhaust"]["then"].__setitem__(
            "tool", "hand_ovr"
        ),
        "then.tool",
        False,
    ),
    (
        "intent executor typo",
        "order_desk",
        _intent("executor", "cancel_ordr"),
        "intents[0].executor",
        False,
    ),
    (
        "intent pre_validation typo",
        "order_desk",
        _intent("pre_validation", "check_cancelable"),
        "intents[0].pre_validation",
        False,
    ),
    (
        "task output missing",
        "bella_notte",
        _set(lambda d: task(d, "BookReservation"), "outputs", {}),
        "flow.slots[9].source",
        False,
    ),
    (
        "readback clock",
        "bella_notte",
        _set(lambda d: slot(d, "preferred_date"), "readback_fmt", "clock"),
        "flow.slots[2].readback_fmt",
        True,
    ),
    (
        "readback lambda",
        "bella_notte",
        _set(lambda d: slot(d, "preferred_date"), "readback_fmt", "lambda v: v"),
        "flow.slots[2].readback_fmt",
        True,
    ),
    ("intent shape", "order_desk", _intent("required", "order_id"), "intents[0].required", True),
    ("intent unknown key", "order_desk", _intent("confirm", "x"), "intents[0].confirm", True),
    (
        "intent confirmation field",
        "order_desk",
        _intent("confirmation", "Cancel {order}?"),
        "intents[0].confirmation",
        True,
    ),
    (
        "intent duplicate",
        "order_desk",
        lambda d: d["intents"].append(d["intents"][0]),
        "intents",
        True,
    ),
    (
        "dunder placeholder",
        "order_desk",
        _intent("done_say", "Done {__class__}."),
        "intents[0].done_say",
        False,
    ),
    (
        "attribute placeholder",
        "order_desk",
        _intent("done_say", "Done {order_id.upper}."),
        "intents[0].done_say",
        False,
    ),
    (
        "flow dunder placeholder",
        "bella_notte",
        _set(lambda d: task(d, "BookReservation"), "then_say", "Booked {__class__}"),
        "flow.tasks[1].then_say",
        True,
    ),
    (
        "available_when unparsable",
        "clinic",
        lambda d: d.__setitem__("available_when", {"collect_payment": "copay_amount >"}),
        "available_when.collect_payment",
        True,
    ),
    (
        "available_when unknown name",
        "clinic",
        lambda d: d.__setitem__("available_when", {"collect_payment": "copay_amont > 0"}),
        "available_when.collect_payment",
        False,
    ),
    (
        "applies_when unparsable",
        "clinic",
        lambda d: d["procedure"]["steps"][6]["applies_when"].__setitem__("expr", "copay_amount >>"),
        "procedure.steps[6].applies_when.expr",
        True,
    ),
    (
        "enum compared with a value it never holds",
        "clinic",
        lambda d: d["variables"][0]["values"].__setitem__(2, "vrified"),
        "procedure.steps[0].complete_when.expr",
        False,
    ),
    (
        "number compared with a word",
        "clinic",
        lambda d: (
            d["variables"][3].__setitem__("type", "boolean")
            or d["procedure"]["steps"][6]["applies_when"].__setitem__(
                "expr", 'copay_amount == "big"'
            )
        ),
        "procedure.steps[6].applies_when.expr",
        False,
    ),
    (
        "undeclared intent output",
        "order_desk",
        lambda d: d["intents"][0].__setitem__("outputs", []),
        "intents[0].done_say",
        False,
    ),
    (
        "declined say placeholder",
        "bella_notte",
        lambda d: task(d, "BookReservation").__setitem__(
            "on_input_declined", {"say": "Without {guest_nam} I can't book."}
        ),
        "flow.tasks[1].on_input_declined.say",
        False,
    ),
    (
        "stall escape dunder",
        "lead_capture",
        lambda d: d["flow"].__setitem__("stall_escape_say", "Bye {__class__}"),
        "flow.stall_escape_say",
        False,
    ),
    (
        "response part placeholder",
        "bella_notte",
        lambda d: slot(d, "party_size")["channel_responses"]["MOBILE"][0]["data"].__setitem__(
            "title", "{party_sise}"
        ),
        "flow.slots[1].channel_responses.MOBILE[0].data.title",
        False,
    ),
    (
        "positional placeholder",
        "bella_notte",
        _set(lambda d: slot(d, "guest_name"), "ask", "Name {0}?"),
        "flow.slots[6].ask",
        False,
    ),
    ("task cycle", "bella_notte", _cycle, "flow.tasks[0].requires", False),
    ("duplicate variable", "clinic", _duplicate_variable, "variables[5].name", False),
    ("duplicate step", "clinic", _duplicate_step, "procedure.steps[9].id", False),
    ("expects unknown", "clinic", _expects_unknown, "expects", False),
    (
        "logic_slm provider",
        "clinic",
        lambda d: d["aux"].__setitem__("logic_slm", {"provider": "nope"}),
        "aux.logic_slm.provider",
        True,
    ),
    (
        "logic_slm key",
        "clinic",
        lambda d: d["aux"].__setitem__("logic_slm", {"modle": "x"}),
        "aux.logic_slm.modle",
        True,
    ),
    (
        "unknown stack",
        "clinic",
        lambda d: d["aux"].__setitem__("stack", "nowhere"),
        "aux.stack",
        False,
    ),
    (
        "topic as a string",
        "clinic",
        lambda d: d.__setitem__("procedures", {"topic": "x"}),
        "procedures.topic",
        True,
    ),
    ("tools as a number", "clinic", lambda d: d.__setitem__("tools", 42), "tools", True),
    ("tools missing from tools.py", "clinic", lambda d: d["tools"].append("refund"), "tools", True),
    ("top-level typo", "bella_notte", lambda d: d.__setitem__("flwo", {}), "flwo", True),
    ("top-level number key", "bella_notte", lambda d: _odd_key(d, 1), "1", True),
    (
        "nested null key",
        "bella_notte",
        lambda d: _odd_key(slot(d, "party_size"), None),
        "flow.slots[1].None",
        True,
    ),
    (
        "slot shape",
        "bella_notte",
        _set(lambda d: slot(d, "party_size"), "requires", "welcome"),
        "flow.slots[1].requires",
        True,
    ),
]


@pytest.mark.parametrize(("bot", "mutate", "path", "loads_fail"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate_names_each_mistake_at_its_path(
    tmp_path: Path, bot: str, mutate: Mutate, path: str, loads_fail: bool
) -> None:
    folder = copy_bot(tmp_path, bot, mutate)
    errors = [i for i in validate_agent(folder) if i.severity == "error"]
    assert any(path in e.path for e in errors), [str(e) for e in errors]
    if loads_fail:
        with pytest.raises(ConfigError, match=path.replace("[", r"\[").replace("]", r"\]")):
            load_agent(folder)
    else:
        load_agent(folder)  # only validate's cross-checks catch it


def test_a_shape_error_does_not_hide_the_others(tmp_path: Path) -> None:
    def many(d: dict[str, Any]) -> None:
        d["tools"] = 42
        d["procedures"] = {"topic": "x"}
        d["variables"][0]["type"] = "colour"
        d["procedure"]["steps"][0]["requires"] = ["nowhere"]
        d["flow"]["slots"][0]["source"] = "telepathy"

    folder = copy_bot(tmp_path, "clinic", many)
    paths = [i.path for i in validate_agent(folder) if i.severity == "error"]
    for expected in (
        "tools",
        "procedures.topic",
        "variables[0].type",
        "procedure.steps[0].requires",
        "flow.slots[0].source",
    ):
        assert expected in paths, paths
    with pytest.raises(ConfigError) as raised:
        load_agent(folder)
    assert all(p in str(raised.value) for p in ("tools:", "procedures.topic:", "flow.slots[0]"))


def test_did_you_mean_names_the_closest_tool(tmp_path: Path) -> None:
    folder = copy_bot(
        tmp_path,
        "bella_notte",
        _set(lambda d: task(d, "FindAvailableTimes"), "tool", "find_available_tims"),
    )
    messages = [i.message for i in validate_agent(folder)]
    assert any("did you mean 'find_available_times'?" in m for m in messages), messages


def test_an_unimportable_tools_py_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    folder = copy_bot(tmp_path, "bella_notte", lambda d: None)
    (folder / "tools.py").write_text("import does_not_exist\n")
    assert any(i.path == "tools.py" for i in validate_agent(folder))
    with pytest.raises(ConfigError, match="tools.py: cannot import"):
        load_agent(folder)


@pytest.mark.parametrize(
    "bot", sorted(p.name for p in BOTS.iterdir() if (p / "agent.yaml").is_file())
)
def test_every_shipped_bot_validates_clean(bot: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(BOTS / bot)]) == 0
    assert "0 error(s), 0 warning(s)" in capsys.readouterr().out


LOAD_CASES = [c for c in CASES if c[4]]


@pytest.mark.parametrize(
    ("bot", "mutate", "path"), [c[1:4] for c in LOAD_CASES], ids=[c[0] for c in LOAD_CASES]
)
def test_every_entry_point_rejects_it_at_the_same_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bot: str, mutate: Mutate, path: str
) -> None:
    folder = copy_bot(tmp_path, bot, mutate)
    scenario = sorted((BOTS / bot / "scenarios").glob("*.yaml"))[0]
    with pytest.raises(ConfigError, match=re.escape(path)):
        Steward.from_folder(folder)
    assert main(["simulate", "--direct", str(folder), str(scenario)]) == 2
    assert main(["rehearse", str(folder)]) == 2
    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr()
    assert out.err.count(path) >= 2  # simulate and rehearse name it
    assert path in out.out  # validate names it


def test_a_key_written_twice_is_an_error_not_a_silent_overwrite(tmp_path: Path) -> None:
    folder = copy_bot(tmp_path, "bella_notte", lambda d: None)
    text = (folder / "agent.yaml").read_text()
    text = text.replace(
        "setter: set_contact_phone", "setter: set_contact_phone\n    setter: set_x", 1
    )
    (folder / "agent.yaml").write_text(text)
    messages = [f"{i.path}: {i.message}" for i in validate_agent(folder)]
    assert any("'setter' is written twice" in m for m in messages), messages
    with pytest.raises(ConfigError, match="written twice"):
        load_agent(folder)
