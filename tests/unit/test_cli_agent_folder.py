"""Every ``steward`` command that takes an agent folder finds it the one way agents load.

``steward forecast`` and ``prompts`` read ``agent.yaml`` for its ``aux:`` section with their own
lookup: given the agent.yaml itself they looked for ``agent.yaml/agent.yaml``. Each command now
gives the loader's answer: a file is named with its folder, a folder without agent.yaml says
what an agent folder holds, and the command exits 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipecat_steward.cli.main import main

BOT = Path(__file__).resolve().parents[2] / "bots" / "bella_notte"
SCENARIO = str(BOT / "scenarios" / "happy_path.yaml")

COMMANDS: dict[str, list[str]] = {  # the arguments after the agent folder
    "validate": [],
    "graph": [],
    "test": [],
    "simulate": [SCENARIO],
    "prompts": [],
    "forecast": [],
    "derive": [],
    "studio": [],
    "rehearse": [],
}


def _given(case: str, tmp_path: Path) -> tuple[str, str]:
    """The path given for ``case`` and the words the command must answer with."""
    if case == "agent.yaml":
        return str(BOT / "agent.yaml"), f"is a file, not an agent folder; name its folder, {BOT}"
    if case == "tools.py":
        return str(BOT / "tools.py"), f"is a file, not an agent folder; name its folder, {BOT}"
    if case == "an empty folder":
        return str(tmp_path), "no agent.yaml here; an agent folder holds agent.yaml and tools.py"
    return str(tmp_path / "nope"), "no agent.yaml here"


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", ["agent.yaml", "tools.py", "an empty folder", "a missing folder"])
def test_a_path_that_is_no_agent_folder_gets_the_loaders_answer(
    command: str, case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given, words = _given(case, tmp_path)
    assert main([command, given, *COMMANDS[command]]) == 2
    err = capsys.readouterr().err
    assert words in err
    assert "Traceback" not in err


def test_the_commands_table_names_every_command_that_takes_an_agent() -> None:
    from pipecat_steward.cli.main import build_parser

    parser = build_parser()
    subcommands = next(a for a in parser._actions if a.dest == "command" or a.choices)
    takes_agent = {
        name
        for name, sub in (subcommands.choices or {}).items()
        if any(a.dest in ("agent", "agent_dir") and not a.option_strings for a in sub._actions)
    }
    assert takes_agent == set(COMMANDS)
