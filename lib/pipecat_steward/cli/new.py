"""``steward new NAME``: scaffold an agent folder that validates and passes ``steward test``.

Writes ``NAME/agent.yaml`` (with the editor schema line), ``NAME/tools.py`` (typed setter and
executor stubs with the return contracts spelled out), ``NAME/scenarios/happy_path.yaml`` (a
scripted scenario with its checks, also a ``pipecat eval`` file) and ``NAME/bot.py`` (the
runner entry for a live call or ``pipecat eval``). It refuses to write over an existing folder.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "files", "run"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

AGENT_YAML = """\
# yaml-language-server: $schema=agent.schema.json
# A callback request: two questions, one readback, one backend call. Check it with
#   steward validate {folder}    and    steward test {folder}
name: {name}
prompt: |
  You are the phone assistant of {title}. Speak briefly and warmly; ask one thing at a time.
flow:
  slots:
    - name: caller_name
      setter: set_caller_name
      hint: "The caller's name"
      ask: "Who am I speaking with?"
      requires_readback: true
    - name: callback_time
      setter: set_callback_time
      hint: "When to call back, as the caller said it ('tomorrow at 10')"
      ask: "When would you like us to call you back?"
      requires_readback: true
      validation:
        errors:
          empty: "Sorry, when should we call you back?"
    - name: reference
      source: "task:ScheduleCallback"
  tasks:
    - name: ScheduleCallback
      tool: schedule_callback
      inputs: [caller_name, callback_time]
      outputs: {{reference: reference}}
      readback_inputs: true
      terminal: true
      then_say: "Done: we'll call you {{callback_time}}. Your reference is {{reference}}."
"""

TOOLS_PY = '''\
"""{name}'s tools.

A setter records what the caller said: it returns ``{{"stored": True, "value": ...}}``, or
``{{"error": True, "error_code": "..."}}`` (the code picks the slot's ``validation.errors``
message). An executor runs a task: it returns ``{{"success": True, ...}}`` with every key the
task's ``outputs`` name, or ``{{"success": False, ...}}``.
"""

from __future__ import annotations

from typing import Any


def set_caller_name(name: str) -> dict[str, Any]:
    """Record the caller's name as they said it."""
    text = name.strip()
    return {{"stored": True, "value": text}} if text else {{"error": True, "error_code": "empty"}}


def set_callback_time(when: str) -> dict[str, Any]:
    """Record when to call back, in the caller's words ('tomorrow at 10')."""
    text = when.strip()
    return {{"stored": True, "value": text}} if text else {{"error": True, "error_code": "empty"}}


def schedule_callback(caller_name: str, callback_time: str) -> dict[str, Any]:
    """Backend: book the callback and return its reference. Replace with your system's call."""
    reference = f"CB-{{sum(map(ord, caller_name + callback_time)) % 9000 + 1000}}"
    return {{"success": True, "reference": reference}}
'''

SCENARIO_YAML = """\
# Run it: steward test {folder}  (offline, scripted LLM)
# or against a real LLM: python {folder}/bot.py & pipecat eval run --bot-url ws://localhost:7860/ws {folder}/scenarios
name: happy_path
description: The caller gives their name and a time, confirms the readback, and gets a reference.
scenarios:
  - name: scripted
    turns:
      - user: "Hi, this is Sam Lee"
        llm:
          - calls: [{{name: set_caller_name, args: {{name: "Sam Lee"}}}}]
        expect:
          - {{event: response}}
        steward:
          slots: {{caller_name: {{status: deferred, value: "Sam Lee"}}}}
          asks: [callback_time]
      - user: "Tomorrow at 10, please"
        llm:
          - calls: [{{name: set_callback_time, args: {{when: "tomorrow at 10"}}}}]
        expect:
          - {{event: response}}
        steward:
          llm_calls: ["set_callback_time:ok"]
          phase: readback
          bot: ["Sam Lee", "tomorrow at 10"]
      - user: "Yes, that's right"
        expect:
          - {{event: response, text_contains: "Your reference is CB-"}}
        steward:
          llm_calls: []
          fired: [confirm_pending, schedule_callback]
          slots: {{reference: filled}}
          status: complete
          bot: ["we'll call you tomorrow at 10", "Your reference is CB-"]
"""

BOT_PY = '''\
"""{name} for pipecat's development runner, and so for ``pipecat eval``.

    python {folder}/bot.py                 # serves ws://localhost:7860/ws (and /client)
    pipecat eval run --bot-url ws://localhost:7860/ws {folder}/scenarios

Needs an LLM: ``OPENAI_API_KEY``, or ``STEWARD_LLM_BASE_URL`` for an OpenAI-compatible server.
"""

from pathlib import Path

from pipecat_steward.pipecat.runner_bot import runner_bot, serve

bot = runner_bot(Path(__file__).parent)

if __name__ == "__main__":
    serve()
'''


def add_parser(sub: Any) -> None:
    """Register ``steward new``."""
    parser = sub.add_parser("new", help="scaffold an agent folder that validates and passes tests")
    parser.add_argument("name", help="the agent's name (a Python identifier); the folder's name")
    parser.add_argument("--dir", type=Path, default=Path("."), help="where to create the folder")
    parser.set_defaults(func=run)


def files(name: str, folder: str) -> dict[str, str]:
    """The scaffold's files, relative path → text."""
    title = name.replace("_", " ").title()
    fields = {"name": name, "folder": folder, "title": title}
    return {
        "agent.yaml": AGENT_YAML.format(**fields),
        "tools.py": TOOLS_PY.format(**fields),
        "scenarios/happy_path.yaml": SCENARIO_YAML.format(**fields),
        "bot.py": BOT_PY.format(**fields),
    }


def run(args: argparse.Namespace) -> int:
    """Write the scaffold; exit 2 on a bad name or an existing folder."""
    if not _NAME.match(args.name):
        print(
            f"steward new: {args.name!r} is not a valid name (letters, digits, _)", file=sys.stderr
        )
        return 2
    folder = args.dir / args.name
    if folder.exists():
        print(f"steward new: {folder} already exists; not touching it", file=sys.stderr)
        return 2
    for relative, text in files(args.name, str(folder)).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    schema = _schema()
    if schema:
        (folder / "agent.schema.json").write_text(schema, encoding="utf-8")
    print(f"created {folder}: agent.yaml, tools.py, scenarios/happy_path.yaml, bot.py")
    print(f"next: steward validate {folder} && steward test {folder}")
    return 0


def _schema() -> str | None:
    """The agent.yaml JSON Schema from ``steward schema``, when that command exists."""
    from pipecat_steward.cli.main import build_parser

    parser = build_parser()
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            args = parser.parse_args(["schema"])
            code = int(args.func(args))
    except SystemExit:
        return None
    return out.getvalue() if code == 0 and out.getvalue().strip() else None
