"""The README's cascaded bot runs as written, and the call opens the way the README says."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import os
import re
import subprocess
import sys
from pathlib import Path

from pipecat.frames.frames import LLMRunFrame

from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.simulate import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]


def _cascaded_snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A cascaded bot", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match
    return match.group(1)


def test_the_snippet_is_a_whole_program(tmp_path: Path) -> None:
    code = _cascaded_snippet()
    assert "LLMRunFrame()" in code and 'if __name__ == "__main__":' in code
    path = tmp_path / "my_bot.py"
    path.write_text(code)
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, str(path), "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--port" in done.stdout  # pipecat's development runner parsed its arguments


async def test_the_first_llm_run_frame_opens_the_call_with_the_agents_opening() -> None:
    steward = Steward.from_folder(ROOT / "bots" / "bella_notte")
    llm = ScriptedLLM([FunctionStep(ScriptedModel()) for _ in range(4)])
    steward.attach(llm)
    await steward.start()
    async with TextPipeline(llm, observers=steward.observers) as pipeline:
        assert pipeline.context.get_messages() == []  # no system prompt in the context
        await pipeline.worker.queue_frame(LLMRunFrame())
        await pipeline.settle()
    assert any("Welcome to Bella Notte" in s for s in pipeline.spoken), pipeline.spoken
    assert "host of Bella Notte" in (llm.inferences[0].seen.system or "")  # set by the steward
