"""``steward validate`` names a broken ``tools.py`` as an error; it never stops on it.

A ``tools.py`` with a syntax error stopped validate on a ``SyntaxError`` traceback (its check
of ``@idempotent`` executors parsed the file again) while ``steward test`` named the problem.
Each way a tools.py can be broken is an error of the report, for a slot agent and a
transaction agent alike.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipecat_steward.cli.main import main
from pipecat_steward.cli.validate import validate_agent

BOTS = Path(__file__).resolve().parents[2] / "bots"

BROKEN: dict[str, bytes] = {
    "a syntax error": b"def broken(:\n",
    "a null byte": b"x = 1\x00\n",
    "bytes that are no UTF-8": b"name = '\xff\xfe'\n",
    "an import that fails": b"import a_module_that_is_not_installed\n",
    "an error at import": b"raise RuntimeError('the backend is down')\n",
}


@pytest.mark.parametrize("bot", ["bella_notte", "order_desk"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_tools_file_is_an_error_of_the_report(
    bot: str, broken: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / bot
    shutil.copytree(BOTS / bot, folder, ignore=shutil.ignore_patterns("__pycache__"))
    tools = folder / "tools.py"
    tools.write_bytes(tools.read_bytes() + b"\n" + BROKEN[broken])
    issues = validate_agent(folder)
    assert any(i.severity == "error" and "tools.py" in i.message for i in issues), issues
    assert main(["validate", str(folder)]) == 1
    assert "Traceback" not in capsys.readouterr().err
