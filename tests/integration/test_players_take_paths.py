"""Every scenario player takes a scenario file's path as it takes an agent folder's.

``run_scenario("bots/x", "bots/x/scenarios/happy.yaml")`` stopped on ``AttributeError: 'str'
object has no attribute 'seed'``. Each player now reads the file's one scripted scenario and
plays it as it plays the loaded one; anything else is refused with what a scenario is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pipecat_steward.exceptions import StewardError
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.monitored import run_scenario_monitored
from pipecat_steward.testing.scenario import load_scenario
from pipecat_steward.testing.simulate import run_scenario
from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

BOTS = Path(__file__).resolve().parents[2] / "bots"
BOT = BOTS / "bella_notte"
FILE = BOT / "scenarios" / "happy_path.yaml"

Player = Callable[[Any, Any], Awaitable[list[dict[str, Any]]]]
PLAYERS: dict[str, Player] = {
    "pipeline": run_scenario,
    "direct": run_scenario_direct,
    "speech-to-speech": run_scenario_s2s,
}


def _words(traces: list[dict[str, Any]]) -> list[Any]:
    return [(t["user"], t["bot"], t.get("asked")) for t in traces]


@pytest.mark.parametrize("player", list(PLAYERS))
@pytest.mark.parametrize("given", [str, Path])
async def test_a_scenario_file_path_plays_as_its_loaded_scenario(
    player: str, given: Callable[[Path], Any]
) -> None:
    play = PLAYERS[player]
    by_path = await play(str(BOT), given(FILE))
    loaded = await play(str(BOT), load_scenario(FILE))
    assert by_path and _words(by_path) == _words(loaded)


ALL_PLAYERS: dict[str, Player] = {
    **PLAYERS,
    "monitored": lambda agent, scenario: _first(run_scenario_monitored(agent, scenario, None)),  # type: ignore[arg-type]
}


async def _first(run: Awaitable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return (await run)[0]


REFUSED: dict[str, tuple[Any, type[Exception], str]] = {
    "a missing file": (BOT / "scenarios" / "nope.yaml", StewardError, "cannot read"),
    "a folder": (BOT / "scenarios", StewardError, "cannot read"),
    "a mapping": ({"name": "x", "turns": []}, TypeError, "a Scenario or its file's path"),
    "None": (None, TypeError, "a Scenario or its file's path, not NoneType"),
}


@pytest.mark.parametrize("player", list(ALL_PLAYERS))
@pytest.mark.parametrize("case", list(REFUSED))
async def test_what_is_no_scenario_is_refused_by_every_player(player: str, case: str) -> None:
    scenario, error, words = REFUSED[case]
    with pytest.raises(error, match=words):
        await ALL_PLAYERS[player](str(BOT), scenario)


@pytest.mark.parametrize("player", list(ALL_PLAYERS))
async def test_a_file_of_several_scenarios_is_refused_by_every_player(
    player: str, tmp_path: Path
) -> None:
    two = tmp_path / "two.yaml"
    entries = "  - name: a\n    turns: [{user: hi}]\n  - name: b\n    turns: [{user: hi}]\n"
    two.write_text(f"name: two\nscenarios:\n{entries}", encoding="utf-8")
    with pytest.raises(StewardError, match="holds 2 scripted scenarios"):
        await ALL_PLAYERS[player](str(BOT), two)
