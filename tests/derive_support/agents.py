"""Agent folders and scripted answers for ``steward derive`` tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipecat_steward.testing.scripted_slm import SLMRequest

PROSE = """\
You are the front desk of Harbor Dental. Speak briefly; one question at a time.

Ask for the caller's full name and date of birth, then call find_patient.
If no record comes back, ask them to spell their last name and try once more.

Tell the caller the amount due and ask whether they want to pay now.

Only after a clear yes, take the payment with charge_card.
"""

WOVEN = """\
You are the front desk of Harbor Dental. Speak briefly; one question at a time.

{{#procedure billing}}
{{#step identify}}
Ask for the caller's full name and date of birth, then call find_patient.
If no record comes back, ask them to spell their last name and try once more.
{{/step}}

{{#step ask_payment}}
Tell the caller the amount due and ask whether they want to pay now.
{{/step}}

{{#step take_payment}}
Only after a clear yes, take the payment with charge_card.
{{/step}}
{{/procedure}}
"""

AGENT_YAML = """\
# Harbor Dental: the author's own comment stays.
name: harbor
prompt: |
{prompt}
variables:
  - {{name: pay_now, type: boolean, extraction: true, description: "Whether the caller agreed to pay now."}}

tools: [find_patient, charge_card]
"""


def indent(text: str) -> str:
    return "".join(f"  {line}" if line.strip() else line for line in text.splitlines(True))


TOOLS_PY = '''"""The agent's tools (validation checks that every tool named in agent.yaml exists)."""


def find_patient(name: str) -> dict:
    return {"success": True, "patient_id": "p-1"}


def charge_card(amount: str) -> dict:
    return {"success": True, "receipt": "r-1"}
'''


def make_agent(folder: Path, prompt: str = PROSE, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    body = AGENT_YAML.format(prompt=indent(prompt).rstrip("\n")) + extra
    if "aux:" not in extra:  # judge steps need a logic_slm to resolve, as validation demands
        body += "aux:\n  stack: openai\n"
    (folder / "agent.yaml").write_text(body, encoding="utf-8")
    (folder / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    return folder


def step(
    step_id: str,
    *,
    title: str | None = None,
    tool: str | None = None,
    expr: str | None = None,
    judge: str | None = None,
    irreversible: bool | None = None,
    applies_code: str | None = None,
    applies_llm: str | None = None,
) -> dict[str, Any]:
    """One row of the derive schema (every field present, as strict output gives it)."""
    complete = None
    if tool or expr or judge:
        kind = "tool" if tool else "variable" if expr else "judge"
        complete = {"kind": kind, "tool": tool, "expr": expr, "prompt": judge}
    applies = None
    if applies_code or applies_llm:
        kind = "code" if applies_code else "llm"
        applies = {"kind": kind, "expr": applies_code, "prompt": applies_llm}
    return {
        "id": step_id,
        "title": title,
        "complete_when": complete,
        "irreversible": irreversible,
        "applies_when": applies,
    }


def answer(prompt: str, *steps: dict[str, Any]) -> dict[str, Any]:
    return {"prompt": prompt, "steps": list(steps)}


GOOD = answer(
    WOVEN,
    step("identify", title="Identify the patient", tool="find_patient"),
    step("ask_payment", title="Ask about payment", expr="pay_now == true"),
    step("take_payment", title="Take the payment", tool="charge_card", irreversible=True),
)


def refusal_fed_back(request: SLMRequest) -> bool:
    return "Your previous answer was refused" in request.user
