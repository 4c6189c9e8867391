"""Any damage to a scenario file ends in a report or in a message naming the file, never a crash.

Hypothesis damages a scenario file of an example bot at one to three places: a key removed, or
a value replaced by another YAML value, with the format's own keys among the names it puts in.
``steward test`` must load it, play it with the direct driver and report (exit 0 or 1), or
refuse it naming the file (exit 2); no exception may reach the author.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.damage_support import damaged

from pipecat_steward.cli.main import main
from pipecat_steward.testing.expectations import CHECK_KEYS

BOTS = Path(__file__).resolve().parents[2] / "bots"
FILES = sorted(BOTS.glob("*/scenarios/*.yaml"))
NAMES = [
    *CHECK_KEYS,
    *("name", "turns", "scenarios", "user", "llm", "calls", "args", "say", "expect", "steward"),
    *("event", "text_contains", "backend", "event_data", "channel", "seed", "verdict", "slm"),
]
"""Names the damage puts in: the keys of the scenario format."""


def _test(bot: Path, scenario: Path, *, direct: bool = True) -> tuple[int, str]:
    """``steward test BOT FILE [--direct]``: its exit code and what it wrote to stderr."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(["test", str(bot), str(scenario), *(["--direct"] if direct else [])])
        except SystemExit as stop:  # argparse's own exit
            code = stop.code if isinstance(stop.code, int) else 2
    return code, err.getvalue()


@pytest.mark.parametrize(
    ("name", "shape", "reason"),
    [
        ("an entry that is a list", {"scenarios": [["x"]]}, "scenarios 1: each is a mapping"),
        ("bot words that are no text", {"bot": [True]}, "bot"),
        ("a checklist that is a list", {"checklist": ["authenticate"]}, "checklist"),
        ("slots that are a list", {"slots": ["party_size"]}, "slots"),
    ],
)
def test_a_check_of_the_wrong_shape_is_named_as_the_file_loads(
    name: str, shape: dict[str, Any], reason: str, tmp_path: Path
) -> None:
    doc = yaml.safe_load((BOTS / "bella_notte" / "scenarios" / "happy_path.yaml").read_text())
    if "scenarios" in shape:
        doc.update(shape)
    else:
        doc["scenarios"][0]["turns"][0]["steward"].update(shape)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, err = _test(BOTS / "bella_notte", path)
    assert code == 2 and str(path) in err and reason in err, (name, err)
    assert "Traceback" not in err


@given(st.sampled_from(FILES), st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_scenario_file_reports_or_names_its_damage(
    scenario: Path, data: st.DataObject
) -> None:
    doc = data.draw(damaged({"doc": yaml.safe_load(scenario.read_text())}, NAMES))["doc"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / scenario.name
        path.write_text(yaml.safe_dump(doc, allow_unicode=True))
        code, err = _test(scenario.parents[1], path)
    # An exception out of the command fails the test by itself. (A traceback on stderr may be
    # a scenario backend raising on purpose, which the session logs as it contains it.)
    assert code in (0, 1, 2), err
    if code == 2:
        assert path.name in err, err


@pytest.mark.parametrize("value", [[], {"n": 4}, "four guests", True])
@pytest.mark.parametrize("direct", [True, False])
def test_event_data_a_slot_cannot_read_is_refused_naming_the_file(
    value: Any, direct: bool, tmp_path: Path
) -> None:
    # The file loads (event data is any mapping); only playing it for this agent finds that
    # its slot cannot read the value: the refusal still names the file to mend, on either path.
    doc = yaml.safe_load((BOTS / "bella_notte" / "scenarios" / "event_prefill.yaml").read_text())
    doc["scenarios"][0]["event_data"] = {"party_size": value}
    path = tmp_path / "telephony.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, err = _test(BOTS / "bella_notte", path, direct=direct)
    assert code == 2 and str(path) in err and "party_size" in err
    assert "Traceback" not in err
