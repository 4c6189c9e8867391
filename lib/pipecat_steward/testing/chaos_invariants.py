"""The safety invariants a chaos conversation must keep, checked after every caller turn.

Each check reads only the conversation's record (traces, checkpoints, the backend's own log of
irreversible invocations, log lines) and the agent's surface, so the same checks judge a
generated conversation, its replay and a shrunk scenario file.

Names (``INVARIANTS``):

- ``unconfirmed_irreversible``: an irreversible or terminal act ran although the caller's turn
  was not a bare affirmation of a read-back, or with a value that was not read back.
- ``repeated_irreversible``: an irreversible act succeeded twice for one idempotency key.
- ``escaped_exception``: an exception (or a hang) escaped the engine's loop.
- ``unanswered_turn``: a caller turn in a live conversation got no reply.
- ``slow_turn``: a caller turn took longer than ``TURN_BOUND_S`` (a stalled executor).
- ``slot_regression``: a settled answer changed on a turn that carried no new content (a
  blank turn, a hesitation, or a bare yes to anything but a value the bot offered).
- ``declined_reasked``: a slot the caller declined was asked for again.
- ``sensitive_leak``: the sensitive canary appeared in a trace or a log line.
- ``checkpoint_roundtrip``: a checkpoint did not restore to an identical state.
- ``resume_divergence``: a session resumed from a checkpoint decided differently.
- ``path_disagreement``: the cascaded pipeline decided differently from the direct driver.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipecat_steward.agent.loader import Agent
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints.contract import Identity
from pipecat_steward.storage.checkpoints.memory import MemoryCheckpointStore
from pipecat_steward.testing.chaos import (
    TURN_BOUND_S,
    PlayedConversation,
    faulted,
    session_for,
    surface_for,
    without_delays,
)
from pipecat_steward.testing.chaos_actors import carries_content, is_plain_affirmation
from pipecat_steward.testing.chaos_surface import AgentSurface, Irreversible
from pipecat_steward.testing.direct import run_scenario_direct

__all__ = ["INVARIANTS", "Violation", "check", "check_agreement", "check_resume", "decisions"]

INVARIANTS = (
    "unconfirmed_irreversible",
    "repeated_irreversible",
    "escaped_exception",
    "unanswered_turn",
    "slow_turn",
    "slot_regression",
    "declined_reasked",
    "sensitive_leak",
    "checkpoint_roundtrip",
    "resume_divergence",
    "path_disagreement",
)

_AWAITING = "AWAITING_CONFIRMATION"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: which, on which caller turn (1-based; 0 when not tied to one)."""

    invariant: str
    turn: int
    detail: str
    kind: str = ""

    @property
    def key(self) -> str:
        """The class of the violation: the invariant, refined by the tool for irreversible acts."""
        return f"{self.invariant}-{self.kind}" if self.kind else self.invariant


def check(agent: Agent, conversation: PlayedConversation) -> list[Violation]:
    """Every invariant violation in ``conversation`` (the single-path checks)."""
    surface = surface_for(agent)
    traces = conversation.traces
    found: list[Violation] = []
    for index, trace in enumerate(traces):
        before = traces[index - 1] if index else None
        invoked = {tool for turn, tool in conversation.invoked if turn == trace["turn"]}
        found += _irreversible(surface, trace, before, invoked)
        found += _answered(trace)
        found += _slow(
            trace, conversation.seconds[index] if index < len(conversation.seconds) else 0
        )
        found += _regression(surface, trace, before)
        found += _leaks(trace, conversation.canary)
    found += _repeats(surface, conversation)
    found += _escaped(conversation)
    found += _roundtrip(agent, conversation)
    found += [
        Violation("sensitive_leak", 0, "canary in a log line")
        for line in conversation.logs
        if conversation.canary and conversation.canary in line
    ][:1]
    return found


def _irreversible(
    surface: AgentSurface,
    trace: Mapping[str, Any],
    before: Mapping[str, Any] | None,
    invoked: set[str],
) -> list[Violation]:
    found: list[Violation] = []
    turn = int(trace["turn"])
    acts = surface.irreversible
    ran = [(f["tool"], f["args"]) for f in trace["fired"]]
    # A model call ran when the backend saw it (not one refused or answered bad_arguments).
    ran += [(c["name"], c["args"]) for c in trace["llm_calls"] if c["name"] in invoked]
    for tool, args in ran:
        act = acts.get(tool)
        by_model = any(c["name"] == tool for c in trace["llm_calls"])
        if act is None or (act.kind == "procedure") != by_model:
            continue
        problem = _unconfirmed(act, trace, before, args)
        if problem:
            reason = problem.split(" ", 2)[1] if problem.startswith("ran ") else "early"
            found.append(
                Violation(
                    "unconfirmed_irreversible", turn, f"{tool}: {problem}", f"{tool}-{reason}"
                )
            )
    return found


def _confirms(said: str, args: Mapping[str, Any]) -> bool:
    """A bare affirmation, or one that only repeats the values it confirms ("correct, and Chen")."""
    if is_plain_affirmation(said):
        return True
    rest = said.lower()
    for value in args.values():
        if isinstance(value, str | int | float) and str(value).strip():
            rest = rest.replace(str(value).lower(), " ")
    words = [w for w in re.split(r"[\s,;.!]+", rest) if w and w != "and"]
    return is_plain_affirmation(" ".join(words))


def _unconfirmed(
    act: Irreversible,
    trace: Mapping[str, Any],
    before: Mapping[str, Any] | None,
    args: Mapping[str, Any],
) -> str | None:
    if not _confirms(str(trace["user"]), args):
        return f"ran on {trace['user'][:60]!r}, not a bare affirmation"
    if act.kind == "procedure":
        return None
    if before is None:
        return "ran before anything was read back"
    if act.kind == "intent":
        txn = before.get("transaction") or {}
        if txn.get("status") != _AWAITING:
            return f"ran without a confirmation question (status {txn.get('status')})"
        read = {k: v for k, v in (txn.get("arguments") or {}).items()}
    else:
        if before["phase"] != "readback":
            return f"ran without a read-back (phase {before['phase']})"
        read = {s: (before["slots"].get(s) or {}).get("value") for s in act.inputs}
    changed = [k for k, v in read.items() if k in args and args[k] != v]
    return f"ran with values not read back: {changed}" if changed else None


def _repeats(surface: AgentSurface, conversation: PlayedConversation) -> list[Violation]:
    seen: dict[tuple[str, str], int] = {}
    for tool, args, result in conversation.backend:
        if result.get("error") or result.get("success") is False:
            continue
        key = (tool, str(args.get("idempotency_key", "")))
        seen[key] = seen.get(key, 0) + 1
    return [
        Violation(
            "repeated_irreversible", 0, f"{tool} succeeded {n} times (key {key or '-'})", tool
        )
        for (tool, key), n in seen.items()
        if n > 1 and tool in surface.irreversible
    ]


def _escaped(conversation: PlayedConversation) -> list[Violation]:
    if conversation.error is None:
        return []
    return [Violation("escaped_exception", len(conversation.traces) + 1, conversation.error[:200])]


def _answered(trace: Mapping[str, Any]) -> list[Violation]:
    # A blank turn may be met with a deliberate silence.
    if trace["bot"] or trace["status"] != "in_progress" or not str(trace["user"]).strip():
        return []
    return [Violation("unanswered_turn", int(trace["turn"]), "no reply")]


def _slow(trace: Mapping[str, Any], seconds: float) -> list[Violation]:
    if seconds <= TURN_BOUND_S:
        return []
    return [Violation("slow_turn", int(trace["turn"]), f"took {seconds:.1f} s")]


def _regression(
    surface: AgentSurface, trace: Mapping[str, Any], before: Mapping[str, Any] | None
) -> list[Violation]:
    if before is None:
        return []
    turn = int(trace["turn"])
    slots, earlier = trace["slots"], before["slots"]
    cleared = {s for f in trace["fired"] if not f["ok"] for s in surface.clears.get(f["tool"], ())}
    found: list[Violation] = []
    quiet = not carries_content(str(trace["user"]))
    offered = " ".join(b["text"] for t in (before, trace) for b in t["bot"]).lower()
    for name, old in earlier.items():
        new = slots.get(name) or {"status": "empty", "value": None}
        kept = new["status"] == "filled" and new["value"] == old["value"]
        # A bare yes accepts a value the bot's words offered (its read-back or question).
        accepted = is_plain_affirmation(str(trace["user"])) and _offered(new["value"], offered)
        excused = not quiet or accepted or name in cleared
        if old["status"] == "filled" and not kept and not excused:
            detail = f"{name}: {old['value']!r} -> {new['status']} {new['value']!r}"
            found.append(Violation("slot_regression", turn, f"{detail} on {trace['user']!r}"))
        if old["status"] == "declined" and new["status"] == "declined" and name in trace["asks"]:
            found.append(Violation("declined_reasked", turn, f"{name} asked again"))
    return found


def _offered(value: Any, said: str) -> bool:
    return value is not None and str(value).strip() != "" and str(value).lower() in said


def _leaks(trace: Mapping[str, Any], canary: str) -> list[Violation]:
    if not canary:
        return []
    body = json.dumps({k: v for k, v in trace.items() if k != "user"}, default=str)
    return (
        [Violation("sensitive_leak", int(trace["turn"]), "canary in the trace")]
        if canary in body
        else []
    )


def _roundtrip(agent: Agent, conversation: PlayedConversation) -> list[Violation]:
    for number, payload in enumerate(conversation.payloads, 1):
        if not payload:
            continue
        session = session_for(agent)
        try:
            session.load_payload(payload)
            again = session.payload()
        except Exception as exc:
            return [Violation("checkpoint_roundtrip", number, f"restore failed: {exc!r}"[:200])]
        if _canonical(again) != _canonical(payload):
            return [Violation("checkpoint_roundtrip", number, "restored state differs")]
    return []


def _canonical(payload: Mapping[str, Any]) -> str:
    # The checkpointer's writer token marks who saved, not what the session holds.
    state = {k: v for k, v in payload.items() if k != "writer"}
    return json.dumps(state, sort_keys=True, default=str)


def decisions(traces: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The engine's decisions per turn, the part every path must agree on."""
    return [
        {
            "fired": [(f["tool"], f["ok"]) for f in t["fired"]],
            "llm_calls": [(c["name"], c["outcome"]) for c in t["llm_calls"]],
            "slots": {n: (s["status"], s["value"]) for n, s in t["slots"].items()},
            "phase": t["phase"],
            "status": t["status"],
            "transaction": (t.get("transaction") or {}).get("status"),
        }
        for t in traces
    ]


async def check_resume(agent: Agent, conversation: PlayedConversation, cut: int) -> list[Violation]:
    """Resume after turn ``cut`` from a checkpoint: the rest must decide as the unbroken run."""
    agent, scenario = faulted(agent, conversation.scenario)
    done = conversation.traces
    if conversation.error is not None or not 0 < cut < len(done):
        return []
    store = MemoryCheckpointStore()
    identity = Identity("chaos", agent.name, "resume")
    head = scenario.model_copy(update={"turns": scenario.turns[:cut]})
    await run_scenario_direct(agent, head, checkpointer=Checkpointer(store, identity))
    rest = await run_scenario_direct(agent, scenario, checkpointer=Checkpointer(store, identity))
    return _diverged("resume_divergence", decisions(done[cut:]), decisions(rest), cut)


async def check_agreement(
    agent: Agent, conversation: PlayedConversation, *, s2s: bool = False
) -> list[Violation]:
    """Replay the conversation on a Pipecat path: the engine's decisions must agree.

    The path is the real cascaded pipeline, or with ``s2s`` the speech-to-speech pipeline
    against the OpenAI Realtime fake.

    The speech-to-speech path has no blank turns (nothing is heard), so a conversation with one
    is not replayed there.
    """
    # Pipecat is imported on demand: the direct checks stay free of it.
    from pipecat_steward.testing.simulate import run_scenario
    from pipecat_steward.testing.simulate_s2s import run_scenario_s2s

    scenario = without_delays(conversation.scenario)
    if conversation.error is not None:
        return []
    if s2s and any(not t.user.strip() for t in scenario.turns):
        return []
    player = run_scenario_s2s if s2s else run_scenario
    try:
        other = await player(agent, scenario.model_copy(deep=True))
    except Exception as exc:
        path = "speech-to-speech" if s2s else "pipeline"
        return [Violation("path_disagreement", 0, f"{path} failed: {exc!r}"[:200], path)]
    found = _diverged("path_disagreement", decisions(conversation.traces), decisions(other), 0)
    return [Violation(v.invariant, v.turn, v.detail, "s2s" if s2s else "") for v in found]


def _diverged(
    name: str, want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]], offset: int
) -> list[Violation]:
    for number, (a, b) in enumerate(zip(want, got, strict=False), offset + 1):
        if a != b:
            keys = [k for k in a if a[k] != b.get(k)]
            detail = "; ".join(f"{k}: {a[k]!r} vs {b.get(k)!r}" for k in keys)
            return [Violation(name, number, detail[:300])]
    if len(want) != len(got):
        return [Violation(name, offset + 1, f"{len(want)} turns vs {len(got)}")]
    return []
