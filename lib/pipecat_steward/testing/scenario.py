"""Scenarios: the file format, scripted backends, per-turn traces and expectations.

Framework-free: the Pipecat simulation (``simulate.py``) and the direct player (``direct.py``)
both build on it. The format is documented in ``docs/scenarios.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pipecat_steward.agent.loader import load_yaml
from pipecat_steward.core.procedures import Verdict
from pipecat_steward.core.redaction import redact_tree
from pipecat_steward.core.slots import Action
from pipecat_steward.exceptions import StewardError
from pipecat_steward.runtime.records import TurnRecord, trace_value
from pipecat_steward.runtime.session import StewardSession
from pipecat_steward.runtime.transactions import TransactionSession, transaction_summary
from pipecat_steward.testing.backend import scripted_backend
from pipecat_steward.testing.expectations import StewardChecks, check_expectations, unknown_keys

__all__ = [
    "Scenario",
    "ScenarioCall",
    "ScenarioInference",
    "ScenarioTurn",
    "ScenarioVerdict",
    "TurnClock",
    "as_scenario",
    "before_turn",
    "resume_point",
    "check_expectations",
    "load_scenario",
    "load_scenario_files",
    "load_scenarios_by_file",
    "load_scenarios",
    "simulation_names",
    "scripted_backend",
    "trace_turn",
    "heard_record",
    "turn_record",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioCall(_Model):
    """A tool call the scripted LLM makes."""

    name: str
    args: dict[str, Any] = Field(default_factory=lambda: {})


class ScenarioInference(_Model):
    """One scripted inference: tool calls and/or text."""

    calls: list[ScenarioCall] = Field(default_factory=lambda: [])
    say: str | None = None


class ScenarioVerdict(_Model):
    """A judge verdict injected before a turn (in place of the monitor)."""

    satisfied: list[str] = Field(default_factory=lambda: [])
    not_applicable: list[str] = Field(default_factory=lambda: [])


SLMBehaviour = Literal["truth", "lie", "garbage", "stall", "fail"]
"""How the scripted logic_slm of ``steward simulate --monitor`` answers (scenario default, or
per turn): from the scenario's truth; ``lie`` (every asked requirement satisfied, extraction
invents values); ``garbage`` (non-JSON text); ``stall`` (no answer before any timeout);
``fail`` (HTTP 500)."""


class ScenarioTurn(_Model):
    """One caller turn, what the LLM does in it, and what must hold after it.

    ``steward`` holds the steward's checks (see ``check_expectations``); ``expect`` is the
    ``pipecat eval`` event list (checked offline where a trace can answer it). A mapping under
    ``expect`` is read as steward checks, the older shape of the file.
    """

    user: str
    variables: dict[str, Any] = Field(default_factory=lambda: {})
    verdict: ScenarioVerdict | None = None
    slm: SLMBehaviour | None = None
    llm: list[ScenarioInference] = Field(default_factory=lambda: [])
    steward: StewardChecks = Field(default_factory=lambda: StewardChecks())
    expect: list[dict[str, Any]] | StewardChecks = Field(default_factory=lambda: [])
    # Keys of a ``pipecat eval`` turn that only a live bot uses.
    send_after: Any = None
    audio: str | None = None
    image: str | None = None

    @field_validator("steward", mode="before")
    @classmethod
    def _known_checks(cls, value: Any) -> Any:
        # Before the shape is checked: a misspelt key is named with its closest key.
        problems = unknown_keys(value) if isinstance(value, Mapping) else []
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @property
    def checks(self) -> dict[str, Any]:
        """The steward checks of this turn."""
        legacy = self.expect if isinstance(self.expect, dict) else {}
        return {**legacy, **self.steward}

    @property
    def events(self) -> list[dict[str, Any]]:
        """The ``pipecat eval`` event expectations of this turn."""
        return self.expect if isinstance(self.expect, list) else []


class Scenario(_Model):
    """A scenario file (``pipecat eval``-shaped: ``name`` + scripted ``turns``)."""

    name: str
    description: str = ""
    seed: int = 0
    channel: str | None = None
    event_data: dict[str, Any] = Field(default_factory=lambda: {})
    backend: dict[str, list[dict[str, Any]]] = Field(default_factory=lambda: {})
    gate_timeout_s: float | None = None
    task_timeout_s: float | None = None
    slm: SLMBehaviour = "truth"
    turns: list[ScenarioTurn]
    # Keys of a ``pipecat eval`` scenario that only a live run uses.
    context: list[dict[str, Any]] | None = None
    user: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    stop_on_failure: bool | None = None
    trigger_disconnect: Any = None


_SIMULATION_KEYS = ("persona", "goal", "success")


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Read the scripted scenarios of a scenario file, in file order.

    The file is a ``pipecat eval`` scenario file: a ``name`` and a ``scenarios:`` list whose
    entries inherit the file's other keys (an entry's own key replaces the file's), each named
    ``<file name>/<entry name>``; or, the older shape, one scenario's keys at the top level.
    Persona simulations (``persona:``) need a live bot and a caller LLM, so they are skipped
    here; ``pipecat eval`` runs them.

    Raises:
        StewardError: naming the file, the scenario and the key (turns counted from 1).
    """
    path = Path(path)
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise StewardError(f"{path}: a scenario file is a mapping with a 'name:'")
    entries = data.get("scenarios")
    if entries is None:
        return [_parse(data, path)]
    if not isinstance(entries, list) or not entries:
        raise StewardError(f"{path}: 'scenarios:' must be a non-empty list")
    odd = [str(i) for i, e in enumerate(entries, start=1) if not isinstance(e, dict)]
    if odd:
        raise StewardError(f"{path}: scenarios {', '.join(odd)}: each is a mapping with a 'name:'")
    defaults = {k: v for k, v in data.items() if k != "scenarios"}
    merged = [{**defaults, **e, "name": f"{data.get('name')}/{e.get('name')}"} for e in entries]
    return [_parse(m, path) for m in merged if not any(k in m for k in _SIMULATION_KEYS)]


def load_scenario_files(paths: Sequence[Path]) -> tuple[list[Scenario], list[str]]:
    """Every scripted scenario of ``paths`` (files, and each folder's ``*.yaml``), in order.

    Every file loads before any scenario plays. Returns the scenarios and the names of the
    persona simulations skipped (``pipecat eval`` runs them).

    Raises:
        StewardError: A file does not load, or the paths hold no scripted scenario (a check
            that ran nothing must not read as passed).
    """
    found, skipped = load_scenarios_by_file(paths)
    return [scenario for _, scenario in found], skipped


def load_scenarios_by_file(
    paths: Sequence[Path],
) -> tuple[list[tuple[Path, Scenario]], list[str]]:
    """``load_scenario_files``, each scenario with the file it came from (to name in errors)."""
    files = [f for p in paths for f in (sorted(p.glob("*.yaml")) if p.is_dir() else [p])]
    where = ", ".join(str(p) for p in paths)
    if not files:
        raise StewardError(f"no scenario files in {where}")
    found = [(f, s) for f in files for s in load_scenarios(f)]
    skipped = [n for f in files for n in simulation_names(f)]
    if not found:
        also = f" ({len(skipped)} persona simulation(s): run them with pipecat eval)"
        raise StewardError(f"no scripted scenario in {where}{also if skipped else ''}")
    return found, skipped


def simulation_names(path: str | Path) -> list[str]:
    """The names of a scenario file's persona simulations (which ``load_scenarios`` skips)."""
    data = load_yaml(Path(path))
    entries = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    return [
        f"{data.get('name')}/{e.get('name')}"
        for e in entries
        if isinstance(e, dict) and any(k in e for k in _SIMULATION_KEYS)
    ]


def load_scenario(path: str | Path) -> Scenario:
    """Read the one scripted scenario of a scenario file (see ``load_scenarios``)."""
    scenarios = load_scenarios(path)
    if len(scenarios) != 1:
        raise StewardError(f"{path}: holds {len(scenarios)} scripted scenarios; use load_scenarios")
    return scenarios[0]


def as_scenario(scenario: Scenario | str | Path) -> Scenario:
    """A scenario given to a player: itself, or the one scripted scenario of its file.

    Raises:
        TypeError: ``scenario`` is neither a ``Scenario`` nor a path.
        StewardError: The file cannot be read or holds no single scripted scenario.
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, Path)):
        return load_scenario(scenario)
    raise TypeError(f"a scenario is a Scenario or its file's path, not {type(scenario).__name__}")


def _parse(data: Mapping[str, Any], path: Path) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        lines = [f"  {_where(e['loc'])}: {e['msg']}" for e in exc.errors()]
        name = data.get("name", "?")
        raise StewardError(f"{path}: scenario {name!r} is invalid:\n" + "\n".join(lines)) from None


def _where(loc: Sequence[int | str]) -> str:
    """A validation error's location, with turn numbers counted from 1 as traces count them."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and i > 0 and loc[i - 1] == "turns":
            parts[-1] = f"turn {part + 1}"
        else:
            parts.append(str(part))
    return ".".join(parts)


class TurnClock:
    """A deterministic clock for evidence times: the scenario turn number."""

    turn = 0

    def __call__(self) -> str:
        return f"turn-{self.turn}"


def resume_point(session: StewardSession, scenario: Scenario) -> int:
    """How many of ``scenario``'s turns a restored session already played.

    A session restored from a checkpoint skips the turns it finished of the same scenario; a
    different scenario (the second half of a call) starts at its first turn with the restored
    state. A call without a checkpoint identity is named after the scenario, so every path keys
    its executors alike.
    """
    if isinstance(session, TransactionSession) and session.checkpointer is None:
        session.call_id = f"scenario-{scenario.name}"
    done = session.turns_done if session.script == scenario.name else 0
    session.script = scenario.name
    return done


def before_turn(session: StewardSession, turn: ScenarioTurn) -> None:
    """Host writes and injected verdicts that happen before the caller speaks."""
    if turn.variables:
        session.host_write(turn.variables)
    if turn.verdict is not None and session.supervisor is not None:
        verdict = Verdict(
            satisfied=tuple(turn.verdict.satisfied),
            not_applicable=tuple(turn.verdict.not_applicable),
        )
        session.host_write(session.supervisor.verdict(session.state.variables, verdict))


def turn_record(session: StewardSession, user: str, since: int | None = None) -> TurnRecord:
    """The session's record of the caller turn that said ``user``.

    Args:
        session: The session that played the turn.
        user: The caller's words as the scenario gives them.
        since: How many turn records the session held before the turn was played: the turn's
            record is the newest one after them. Without it the newest record is taken when
            it is the turn that said ``user`` (see ``heard_record``).

    Returns:
        The turn's record; an empty record (no actions, no calls, nothing said; the words
        redacted as records keep them) when the engine never saw the turn.
    """
    turns = session.turns
    empty = TurnRecord(session.secrets.redact(user.strip()))
    if since is not None:
        return turns[-1] if len(turns) > since else empty
    return heard_record(session, user) or empty


def heard_record(session: StewardSession, user: str) -> TurnRecord | None:
    """The latest turn record when it is the caller turn that said ``user`` (records redact)."""
    turns = session.turns
    words = user.strip()
    if turns and (turns[-1].user == words or (session.heard == words and turns[-1].user)):
        return turns[-1]
    return None


class HasSession(Protocol):
    """Anything that carries a steward session (a ``Steward``, an S2S steward)."""

    @property
    def session(self) -> StewardSession: ...


def trace_turn(
    number: int, session: StewardSession | HasSession, record: TurnRecord
) -> dict[str, Any]:
    """The JSON trace of one caller turn."""
    if not isinstance(session, StewardSession):
        session = session.session
    return redact_tree(_trace(number, session, record), session.secrets.bound())


def _trace(number: int, session: StewardSession, record: TurnRecord) -> dict[str, Any]:
    state = session.state
    actions = record.actions
    llm_actions = [a for a in actions if not a.preempt and not a.calls]
    return {
        "turn": number,
        "user": record.user,
        "visible_tools": sorted(actions[0].visible_tools) if actions else [],
        "llm_calls": [
            {"name": c.name, "args": dict(c.args), "outcome": c.outcome} for c in record.llm_calls
        ],
        "fired": [
            {
                "tool": c.name,
                "args": dict(c.args),
                "ok": c.outcome == "ok",
                "task": _task(session, c.name),
            }
            for c in record.fired
        ],
        "bot": [{"text": u.text, "source": u.source} for u in record.bot],
        "phase": actions[-1].phase if actions else "collection",
        "asks": _asks(actions),
        "slots": {
            n: {"status": r.status, "value": r.value, "source": r.source}
            for n, r in state.slots.items()
            if r.status != "empty"
        },
        "status": state.status,
        "ended": session.ended,
        "payloads": list(record.payloads),
        "gate": list(record.gates),
        "transaction": transaction_summary(session),
        "checklist": _checklist(session),
        "slm_calls": 0,
        "corrections": [],
        "extracted": {},
        "hints": [{"tag": h.tag, "text": h.text} for a in llm_actions for h in a.hints],
        "events": [
            {"tag": e.tag, "n": e.n, **{k: trace_value(v) for k, v in e.data.items()}}
            for e in record.events
        ],
    }


def _checklist(session: StewardSession) -> dict[str, Any] | None:
    status = session.checklist()
    if status is None:
        return None
    steps = {s["id"]: s["state"] for p in status["procedures"] for s in p["steps"]}
    return {"current": status["current_step"], "steps": steps}


def _asks(actions: Sequence[Action]) -> list[str]:
    """Slots the bot asked for: in its preempted messages and in the LLM's final reply."""
    spoken = [a for a in actions if a.preempt]
    spoken += [a for a in actions[-1:] if not a.preempt and not a.calls]
    return sorted({n for a in spoken for n in a.asks})


def _task(session: StewardSession, tool: str) -> str | None:
    names = session.agent.flow.executors.get(tool, ())
    return names[0] if names else None
