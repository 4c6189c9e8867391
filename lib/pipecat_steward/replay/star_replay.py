"""Replaying STAR dialogues through compiled procedures: gold queries, perturbations, next action.

``replay_star(DIR)`` compiles every task flowchart (:mod:`.star_compile`), learns the ask →
field bindings (:mod:`.star_bind`), plays every dialogue through the runtime
(:mod:`.star_play`) and reports per task and overall, for happy and unhappy dialogues apart
(:mod:`.star_report`). Perturbations are made on happy dialogues from the first gold query of
each task that the gate allowed:

- *drop*: remove the event that completed one ask or inform prerequisite (and, for an ask,
  the wizard's question), then play up to the query again;
- *early*: move the query to just before the event that completed its last prerequisite.

A perturbation *breaks a requires edge* when a prerequisite of the query is open and applies
at the moment of the call; the gate must then veto, and its text must name every such step.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.core.procedures import step_state
from pipecat_steward.core.procedures.state import ready
from pipecat_steward.replay.star_bind import (
    bind_fields,
    bind_inform_fields,
    criteria_fields,
    schema_fields,
)
from pipecat_steward.replay.star_compile import StarProcedure, compile_task
from pipecat_steward.replay.star_data import (
    Event,
    StarDialogue,
    flowchart_replies,
    load_apis,
    load_dialogues,
    load_tasks,
)
from pipecat_steward.replay.star_echo import EchoMatcher, measure_echo
from pipecat_steward.replay.star_evidence import next_query_values, supplied_fields
from pipecat_steward.replay.star_play import GateCall, Player
from pipecat_steward.replay.star_report import Report, VetoRecord

__all__ = ["StarReplayer", "replay_star"]


@dataclass(frozen=True, slots=True)
class Played:
    """A dialogue played: the players by task and the next-action pairs (gold, predicted)."""

    players: Mapping[str, Player]
    actions: tuple[tuple[str, str], ...]


class StarReplayer:
    """Compiles the tasks once and plays dialogues through them."""

    def __init__(
        self,
        flowcharts: Mapping[str, Mapping[str, Any]],
        apis: Mapping[str, Mapping[str, Any]],
        dialogues: Sequence[StarDialogue],
    ) -> None:
        first = {t: compile_task(t, f, apis.get(t)) for t, f in flowcharts.items()}
        self.apis = _api_names(first, apis)
        self.bindings = bind_fields(first, self.apis, dialogues)
        self.informs = bind_inform_fields(first, self.apis, dialogues)
        self.echo = EchoMatcher(flowcharts)
        self.procs = {
            t: compile_task(t, f, apis.get(t), self._fields(first[t], f, apis.get(t)))
            for t, f in flowcharts.items()
        }

    def _fields(
        self, proc: StarProcedure, flowchart: Mapping[str, Any], api: Mapping[str, Any] | None
    ) -> dict[str, tuple[str, ...]]:
        """The fields each step collects.

        The one field the step's words name, else the measured one, else the named ties; an
        inform adds every field measured in the answers to it.
        """
        named = schema_fields(proc, flowchart_replies(flowchart), api or {})
        measured = self.bindings.get(proc.task, {})
        out: dict[str, tuple[str, ...]] = {}
        for label in {*named, *measured}:
            one = len(named.get(label, ())) == 1
            out[label] = named[label] if one or label not in measured else measured[label]
        for label, fields in self.informs.get(proc.task, {}).items():
            out[label] = tuple(dict.fromkeys([*out.get(label, ()), *fields]))
        return criteria_fields(proc, out, api or {})

    def play(
        self,
        dialogue: StarDialogue,
        order: Sequence[int] | None = None,
        stop_after: int | None = None,
        *,
        fallback: bool = True,
    ) -> Played:
        """Play the dialogue's events in ``order`` (original indices; default: all).

        Args:
            dialogue: The dialogue.
            order: The original event indices to play, in this order (a perturbation).
            stop_after: Stop after playing this original index.
            fallback: Whether the extraction stand-in credits a value the heard rule missed
                to the last user turn before its query (see :mod:`.star_evidence`).
        """
        events = dialogue.events
        players = {
            t: Player(
                self.procs[t],
                next_query_values(events, self.apis[t]),
                supplied_fields(events, self.apis[t], fallback=fallback),
                self.echo,
            )
            for t in dict.fromkeys(dialogue.tasks)
            if t in self.procs
        }
        single = next(iter(players.values())) if len(players) == 1 else None
        actions: list[tuple[str, str]] = []
        for i in range(len(events)) if order is None else order:
            predicted = _predict(single, bool(actions)) if single else ""
            gold = self._step(players, i, events[i])
            if gold is not None and single is not None:
                actions.append((gold, predicted))
            if i == stop_after:
                break
        return Played(players, tuple(actions))

    def _step(self, players: Mapping[str, Player], i: int, event: Event) -> str | None:
        """Apply one event; return the wizard's action label when it is one."""
        if event.kind == "utter":
            for player in players.values():
                player.utter(i, event.text)
            return None
        if event.kind == "say":
            for player in players.values():
                player.say(i, event.text)
            return None
        if event.kind == "pick":
            for player in players.values():
                if event.label in player.proc.steps or event.label in player.proc.branch_of:
                    player.pick(i, event.label)
            return event.label
        player = self._owner(players, event.api)
        if player is None:
            return "query" if event.kind == "query" else None
        if event.kind == "query":
            return player.query(i, event.constraints or {}).label
        player.result(i, event.item)
        return None

    def _owner(self, players: Mapping[str, Player], api: str) -> Player | None:
        """The dialogue's player whose task answers to this API name (the first, if several)."""
        return next((p for t, p in players.items() if api in self.apis[t]), None)


def _api_names(tasks: Iterable[str], apis: Mapping[str, Mapping[str, Any]]) -> dict[str, set[str]]:
    """The API names each task's queries use: its own, and its schema's ``function``.

    A function that names a task of the folder is that task's own API, never an alias of
    another: its queries belong to it. Several schemas may share a function
    (``generic_sample``); a query under that name goes to the dialogue's first such task.
    """
    functions = {t: str(apis.get(t, {}).get("function") or t) for t in tasks}
    return {t: {t} if f in functions else {t, f} for t, f in functions.items()}


def _predict(player: Player, acted: bool) -> str:
    if not acted:
        return "hello"  # every flowchart starts at the shared greeting
    return player.current or "anything_else"


def _perturb(
    replayer: StarReplayer, dialogue: StarDialogue, played: Played, report: Report
) -> None:
    for task, player in played.players.items():
        firsts = {c.label: c for c in reversed(player.calls)}  # a done query no longer gates
        call = next((c for c in firsts.values() if c.allowed), None)
        if call is None:
            continue
        procs = player.proc.procs
        prereqs = [
            a
            for a in procs.ancestors[call.label]
            if player.proc.steps[a].kind != "query"
            and player.done_at.get(a, call.index) < call.index
        ]
        every = range(len(dialogue.events))
        for step in prereqs:
            drop = {player.done_at[step], player.answered_by.get(step, -1)}
            order = [j for j in every if j not in drop]
            _judge(replayer, dialogue, task, order, call.index, "drop", report)
        if prereqs:
            latest = max(player.done_at[a] for a in prereqs)
            order = [j for j in every if j != call.index]
            order.insert(latest, call.index)
            _judge(replayer, dialogue, task, order, call.index, "early", report)


def _judge(
    replayer: StarReplayer,
    dialogue: StarDialogue,
    task: str,
    order: Sequence[int],
    at: int,
    kind: str,
    report: Report,
) -> None:
    played = replayer.play(dialogue, order, at)
    player = played.players[task]
    call: GateCall | None = next((c for c in player.calls if c.index == at), None)
    if call is None:
        return
    procs = player.proc.procs
    broken = [
        a
        for a in procs.ancestors[call.label]
        if step_state(procs.steps[a], player.variables) == "open"
    ]
    titles = [procs.steps[a].title for a in broken]
    nxt = procs.steps.get(call.next_step or "")
    guided = nxt is not None and nxt.id in broken and ready(procs, nxt, player.variables)
    caught = (
        not call.allowed
        and set(broken) <= set(call.open_steps)
        and all(t in call.message for t in titles)
    )
    report.perturbation(task, kind, dialogue.dialogue_id, bool(broken), caught, broken, call)
    if broken:
        report.veto_guidance(guided)


def replay_star(
    data_dir: str | os.PathLike[str], dialogues: Iterable[StarDialogue] | None = None
) -> dict[str, Any]:
    """Replay every dialogue of a STAR folder and return the report.

    Args:
        data_dir: A folder with ``tasks/*.json``, optional ``apis/*.json`` and
            ``dialogues_*.jsonl.gz``.
        dialogues: Replay these instead of the folder's dialogue files.
    """
    data_dir = Path(data_dir)
    flowcharts = load_tasks(data_dir)
    apis = load_apis(data_dir) if (data_dir / "apis").is_dir() else {}
    todo = list(dialogues) if dialogues is not None else list(load_dialogues(data_dir))
    start = time.perf_counter()
    replayer = StarReplayer(flowcharts, apis, todo)
    report = Report(replayer.procs)
    compiled = time.perf_counter()
    for dialogue in todo:
        _record(report, dialogue, replayer.play(dialogue))
    played_s = time.perf_counter() - compiled
    for dialogue in todo:
        for task, player in replayer.play(dialogue, fallback=False).players.items():
            for call in player.calls:
                report.heard_only(task, dialogue.happy, call.allowed)
        if dialogue.happy:
            _perturb(replayer, dialogue, replayer.play(dialogue), report)
    seconds = {
        "compile_and_bind": compiled - start,
        "replay": played_s,
        "total": time.perf_counter() - start,
    }
    return {**report.summary(len(todo), seconds), "echo_rule": _echo_rule(replayer, todo)}


def _echo_rule(replayer: StarReplayer, todo: Sequence[StarDialogue]) -> dict[str, Any]:
    """The echo rule measured on the wizards' drafts (each draft to the task of its label)."""
    replies = replayer.echo.replies
    drafts = [
        (next(t for t in d.tasks if label in replies.get(t, {})), text, label)
        for d in todo
        for text, label in d.drafts
        if any(label in replies.get(t, {}) for t in d.tasks)
    ]
    steps = {
        t: [s.label for s in p.steps.values() if s.kind != "query"]
        for t, p in replayer.procs.items()
    }
    return measure_echo(replayer.echo, drafts, steps)


def _record(report: Report, dialogue: StarDialogue, played: Played) -> None:
    for task, player in played.players.items():
        for call in player.calls:
            record = None if call.allowed else _veto(dialogue, player, call)
            report.query(task, dialogue.happy, record)
        report.ask_checks(task, player.ask_checks)
        for index, step in player.guided:
            after = (e.label for e in dialogue.events[index + 1 :] if e.kind == "pick")
            following = next((x for x in after if x in player.proc.steps), None)
            report.result_guidance(step, following)
        if len(played.players) == 1:
            report.actions(task, dialogue.happy, played.actions)


def _veto(dialogue: StarDialogue, player: Player, call: GateCall) -> VetoRecord:
    events = dialogue.events
    picks = {e.label: j for j, e in reversed(list(enumerate(events))) if e.kind == "pick"}
    given = set((events[call.index].constraints or {}).keys())
    classes = tuple(
        _classify(player.proc, step, picks.get(step), call.index, given) for step in call.open_steps
    )
    return VetoRecord(dialogue.dialogue_id, call.label, call.open_steps, classes, call.message)


def _classify(proc: StarProcedure, step: str, picked: int | None, at: int, given: set[str]) -> str:
    """Why a prerequisite was open at a gold query.

    ``earlier_query_not_made``: the wizard called a later API step without the earlier one;
    ``picked_after_query``: the wizard did the step, but after the call; ``asked_not_answered``:
    asked, no user turn before the call; ``value_given_not_heard``: never picked, but the
    query carries a field the step collects (the user gave it in words the heard rule does not
    match, or the wizard asked in free text); ``no_evidence``: never picked and nothing in the
    query shows it (skipped, or said in free text).
    """
    if proc.steps[step].kind == "query":
        return "earlier_query_not_made"
    if picked is not None:
        return "picked_after_query" if picked > at else "asked_not_answered"
    return "value_given_not_heard" if set(proc.steps[step].fields) & given else "no_evidence"
