"""The monitor's fixture suite: transcripts of skipped steps, hallucinated progress, order
violations and off-procedure talk, played through the pure policy with scripted verdicts.

Each transcript is a list of events; every assessment the policy asks for consumes the next
scripted verdict. The log records why each check ran and what the ladder did with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.unit.test_monitor_policy import verdict

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.core.monitor import (
    Assess,
    Checked,
    Correction,
    Deliver,
    EvidenceLedger,
    Exchange,
    LadderState,
    Moment,
    Observe,
    add_tool_result,
    add_utterance,
    add_variable,
    build_request,
    check_verdict,
    decide_assessment,
    on_finding,
    out_of_order_tools,
    take_due,
)
from pipecat_steward.core.procedures import (
    ProcedureView,
    apply_verdict,
    current_step,
    done_name,
    on_tool_result,
    on_variables,
    start_session,
)

CLINIC = load_agent(Path(__file__).resolve().parents[2] / "bots" / "clinic")
PROCS = CLINIC.procedures
assert PROCS is not None
FOUND = {"status": 200, "data": {"total": 1, "entry": [{"resource": {"id": "pat-1815"}}]}}


@dataclass
class Run:
    verdicts: list[dict[str, Any]]
    state: Any = None
    variables: dict[str, Any] = field(default_factory=lambda: {})
    ledger: EvidenceLedger = field(default_factory=EvidenceLedger)
    ladder: LadderState = field(default_factory=LadderState)
    exchange: Exchange = field(default_factory=Exchange)
    tools: list[str] = field(default_factory=lambda: [])
    log: list[str] = field(default_factory=lambda: [])
    delivered: list[Correction] = field(default_factory=lambda: [])
    now: float = 0.0

    def __post_init__(self) -> None:
        update = start_session(PROCS, {})
        self.state, self.variables = update.state, dict(update.variables)

    def play(self, event: tuple[Any, ...]) -> None:
        self.now += 5.0
        kind, *rest = event
        getattr(self, f"_{kind}")(*rest)

    def _var(self, name: str, value: Any) -> None:
        self.ledger = add_variable(self.ledger, name, value, self.now)
        update = on_variables(ProcedureView(PROCS, self.state, {**self.variables, name: value}), [name])
        self.state, self.variables = update.state, dict(update.variables)

    def _done(self, *steps: str) -> None:  # test set-up: steps completed earlier in the call
        self.variables.update({done_name(s): True for s in steps})

    def _tool(self, name: str, result: Any) -> None:
        self.ledger = add_tool_result(self.ledger, name, result, at=self.now)
        update = on_tool_result(ProcedureView(PROCS, self.state, self.variables), name, result).update
        self.state, self.variables = update.state, dict(update.variables)
        self.tools.append(name)

    def _agent(self, text: str) -> None:
        self.ledger = add_utterance(self.ledger, "agent", text, self.now)
        self._moment("assistant_text", text)

    def _caller(self, text: str) -> None:
        self.tools = []
        self.ledger = add_utterance(self.ledger, "caller", text, self.now)
        self.ladder, note = take_due(self.ladder, ProcedureView(PROCS, self.state, self.variables), self.now)
        if note is not None:
            self.delivered.append(note)
            self.log.append(f"delivered {note.kind}:{note.step}")
        self._moment("caller_final", "")

    def _moment(self, moment: Moment, text: str) -> None:
        step = current_step(PROCS, self.state, self.variables)
        self.exchange = self.exchange.follow(step.id if step else None).heard(moment)
        ooo = out_of_order_tools(ProcedureView(PROCS, self.state, self.variables), tuple(self.tools))
        decision = decide_assessment(
            ProcedureView(PROCS, self.state, self.variables),
            moment,
            text=text,
            exchange=self.exchange,
            backed=bool(self.tools),
            out_of_order=ooo,
        )
        if isinstance(decision, Assess):
            self._assess(decision)

    def _assess(self, decision: Assess) -> None:
        request = build_request(
            ProcedureView(PROCS, self.state, self.variables), self.ledger, decision.steps, decision.reason
        )
        checked = check_verdict(self.verdicts.pop(0), request, PROCS, self.variables)
        assert isinstance(checked, Checked), checked
        update = apply_verdict(ProcedureView(PROCS, self.state, self.variables), checked.verdict)
        self.state, self.variables = update.state, dict(update.variables)
        self.ladder, outcome = on_finding(
            self.ladder, checked.verdict.violation, ProcedureView(PROCS, self.state, self.variables), self.now
        )
        self.log.append(f"{decision.reason} -> {_name(outcome)}")
        if isinstance(outcome, Deliver) and outcome.when == "now":
            self.delivered.append(outcome.correction)


def _name(outcome: Observe | Deliver | None) -> str:
    match outcome:
        case Observe(why=why):
            return f"observe ({why})"
        case Deliver(correction=c, when="queued"):
            return f"queue {c.severity.value} {c.kind}:{c.step}"
        case Deliver(correction=c):
            return f"deliver {c.severity.value} {c.kind}:{c.step}"
        case None:
            return "clean"


PREMATURE = verdict(violation=("premature_action", "confirm_identity"))
CHARGED = verdict(violation=("hallucination", "take_payment"))
OFF = verdict(violation=("off_procedure", None))
SKIPPED = verdict(violation=("skipped_step", "ask_copay"))
AT_COPAY = ("authenticate", "confirm_identity", "lookup_patient", "confirm_appointment", "headshot")

CASES: dict[str, tuple[list[tuple[Any, ...]], list[dict[str, Any]], list[str], int]] = {
    # The model looks the patient up with a guessed birth date before the read-back.
    "order_violation": (
        [
            ("var", "customer_auth_status", "verified"),
            ("agent", "Let me look you up."),
            ("tool", "find_patient", FOUND),
            ("agent", "Found you."),
            ("caller", "Okay"),
            ("agent", "Your next visit is on July 14th."),
            ("caller", "Great"),
        ],
        [PREMATURE, PREMATURE, PREMATURE, PREMATURE],
        [
            "out_of_order -> observe (needs the same finding on the next check)",
            "judge_step -> queue note premature_action:confirm_identity",
            "judge_step -> observe (identical correction already queued)",
            "delivered premature_action:confirm_identity",
            "judge_step -> observe (correction budget spent)",
        ],
        1,
    ),
    # Hallucinated progress: "your card has been charged" with no payment tool ever run.
    "hallucinated_payment": (
        [
            ("done", *AT_COPAY, "ask_copay"),
            ("agent", "Your copay has been charged."),
            ("caller", "Thanks"),
            ("agent", "You're all set, the payment is done."),
            ("caller", "Bye"),
        ],
        [CHARGED, CHARGED],
        [
            "completion_claim -> observe (needs the same finding on the next check)",
            "completion_claim -> deliver severe hallucination:take_payment",
        ],
        1,
    ),
    # The agent skips the copay question and talks about something else.
    "skipped_step": (
        [
            ("done", *AT_COPAY),
            ("agent", "Your photo is attached."),
            ("caller", "Cool"),
            ("agent", "Anything else today?"),
            ("caller", "No"),
            ("agent", "Bye then!"),
            ("caller", "Wait"),
        ],
        [verdict(), *[SKIPPED] * 5],
        [
            "completion_claim -> clean",
            "judge_step -> observe (needs the same finding on the next check)",
            "judge_step -> queue note skipped_step:ask_copay",
            "delivered skipped_step:ask_copay",
            *["judge_step -> observe (correction budget spent)"] * 3,
        ],
        1,
    ),
    # Off-procedure talk is recorded on every check and never corrected.
    "off_procedure": (
        [
            ("done", *AT_COPAY),
            ("agent", "Your copay is $40, pay now?"),
            ("caller", "Is it raining there?"),
            ("agent", "It is sunny here!"),
            ("caller", "Nice"),
        ],
        [OFF, OFF, OFF],
        ["judge_step -> observe (off_procedure is recorded, never corrected)"] * 3,
        0,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fixture_transcripts(name: str) -> None:
    events, verdicts, expected_log, corrections = CASES[name]
    run = Run(list(verdicts))
    for event in events:
        run.play(event)
    assert run.log == expected_log
    assert len(run.delivered) == corrections
    assert run.verdicts == []  # every scripted check was asked for, no more


def test_the_last_violation_is_recorded_for_the_checklist() -> None:
    run = Run([OFF, OFF, OFF])
    for event in CASES["off_procedure"][0]:
        run.play(event)
    assert any(v.kind == "off_procedure" for _, v in run.state.violations)


def test_a_completed_judge_step_stops_the_checks() -> None:
    done = verdict(["ask_copay"], evidence=["e2"])
    run = Run([done])
    for event in [
        ("done", *AT_COPAY),
        ("agent", "Your copay is $40, pay now?"),
        ("caller", "Yes please"),
        ("agent", "Great."),
    ]:
        run.play(event)
    assert run.variables[done_name("ask_copay")] is True
    assert run.log == ["judge_step -> clean"]
