"""The engine's guarantees (ordering, completeness, idempotency, retry bound, terminal state,
no corruption, cascade) as property tests over generated configs and event sequences, and the
slot merge rules as properties."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pipecat_steward.core.slots import (
    CompiledFlow,
    Fire,
    compile_flow,
    decide,
    merge_record,
    route_executor,
    step,
)
from pipecat_steward.core.slots.dag import is_active, is_usable, requires_met
from pipecat_steward.core.state import SessionState, SlotRecord
from pipecat_steward.runtime.dispatch import dispatch

STATUSES = ["empty", "pending", "deferred", "filled", "inferred", "declined"]


@st.composite
def flows(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(2, 7))
    slots: list[dict[str, Any]] = []
    for i in range(n):
        slot: dict[str, Any] = {
            "name": f"s{i}",
            "setter": f"set_s{i}",
            "ask": f"Q{i}?",
            "requires_readback": draw(st.booleans()),
            "required": draw(st.booleans()) or i == 0,
        }
        if i and draw(st.booleans()):
            slot["requires"] = [f"s{draw(st.integers(0, i - 1))}"]
        if i > 1 and draw(st.integers(0, 4)) == 0:
            slot["condition"] = "s0 != 'skip'"
        slots.append(slot)
    tasks = []
    for j in range(draw(st.integers(1, 3))):
        inputs = sorted(set(draw(st.lists(st.sampled_from([s["name"] for s in slots]), min_size=1, max_size=3))))
        slots.append({"name": f"out{j}", "source": f"task:T{j}"})
        tasks.append(
            {
                "name": f"T{j}",
                "tool": f"tool{j}",
                "inputs": inputs,
                "outputs": {"r": f"out{j}"},
                "readback_inputs": draw(st.booleans()),
                "terminal": j == 0 and draw(st.booleans()),
                "on_failure": {
                    "max_retries": draw(st.integers(1, 3)),
                    "clear_slots": inputs[:1] if draw(st.booleans()) else [],
                },
            }
        )
    return {"slots": slots, "tasks": tasks, "steer_back": {"soft_after": 2, "hard_after": 3, "escalate_after": 5}}


Event = tuple[str, Any]
events = st.lists(
    st.one_of(
        st.tuples(st.just("say"), st.sampled_from(["yes", "hmm", "what?", "yes and more", "no"])),
        st.tuples(st.just("set"), st.tuples(st.integers(0, 6), st.sampled_from(["a", "b", "skip", None]))),
        st.tuples(st.just("tool"), st.sampled_from(["confirm_pending", "reject_pending"])),
        st.tuples(st.just("correct"), st.tuples(st.integers(0, 6), st.sampled_from(["c", "d"]))),
        st.tuples(st.just("decline"), st.integers(0, 6)),
    ),
    max_size=25,
)


class Checker:
    """Runs an event sequence and checks the guarantees at every invocation."""

    def __init__(self, flow: CompiledFlow, results: list[bool]) -> None:
        self.flow, self.results = flow, results
        self.state = SessionState()
        self.fails: dict[str, int] = {}

    def invoke(self, text: str) -> None:
        for _ in range(30):
            before = self.state
            first = step(self.flow, before, text)
            assert step(self.flow, before, text) == first, "idempotency"
            assert decide(self.flow, before) == decide(self.flow, before)
            if before.status != "in_progress":
                assert first.state == before, "terminal state"
                return
            self.check_action(first)
            self.state = first.state
            if not any(c.kind != "then" for c in first.action.calls):
                return
            self.run_calls(first.action.calls)
            text = ""
        raise AssertionError("no settle")

    def check_action(self, result: Any) -> None:
        state, action = result.state, result.action
        for name in action.asks:
            assert requires_met(self.flow, state.slots, self.flow.slot[name].config.requires), "ordering"
        for setter in action.visible_tools & set(self.flow.setters):
            slots = [self.flow.slot[s] for _, s in self.flow.setters[setter]]
            assert any(requires_met(self.flow, state.slots, s.config.requires) for s in slots), "ordering and visibility"
        for call in action.calls:
            if call.kind == "executor":
                task = self.flow.task[call.task or ""]
                for name in [*task.config.inputs, *task.config.requires]:
                    slot, record = self.flow.slot[name], state.record(name)
                    ok = not is_active(slot, state) or is_usable(record, state.turn) or (not slot.config.required and record.status in ("empty", "declined"))
                    assert ok, f"completeness: {name} is {record.status}"
        for task in self.flow.tasks:
            assert state.retries.get(task.name, 0) <= task.config.on_failure.max_retries, "retry bound"
        self.check_cascade(result)

    def check_cascade(self, result: Any) -> None:
        """Cascade: a ready task is never left waiting for the caller, unless the turn is settled
        by a failure, a slot error or a hard steer-back."""
        action, state = result.action, result.state
        if action.calls or state.status != "in_progress":
            return
        waiting = {"slot_error", "steer_back_hard"} & {e.tag for e in action.events}
        waiting |= {"task_failed" for e in action.events if e.tag == "task" and not e.data["ok"]}
        if not waiting:
            assert not isinstance(decide(self.flow, state), Fire), "cascade"

    def run_calls(self, calls: Any) -> None:
        for call in calls:
            if call.kind == "confirm":
                self.state = dispatch(self.flow, self.state, {}, "confirm_pending", {}, check_visible=False).state
            elif call.kind == "executor":
                ok = self.results.pop(0) if self.results else True
                self.state = route_executor(self.flow, self.state, call.name, {"success": ok, "r": 1}).state
                if ok:  # only a success resets the count; corrections in between do not
                    self.fails.pop(call.task or "", None)
                else:
                    self.fails[call.task or ""] = self.fails.get(call.task or "", 0) + 1
                    max_retries = self.flow.task[call.task or ""].config.on_failure.max_retries
                    assert self.fails[call.task or ""] <= max_retries, "retry bound: at most max_retries failures"

    def apply(self, event: Event) -> None:
        kind, arg = event
        if kind == "say":
            self.invoke(arg)
            return
        before = {n: r for n, r in self.state.slots.items() if r.status in ("filled", "declined")}
        if kind == "set":
            i, value = arg
            setter = f"set_s{i}"
            if setter in self.flow.setters:
                self.state = dispatch(self.flow, self.state, {}, setter, {"v": value}).state
        elif kind == "tool":
            self.state = dispatch(self.flow, self.state, {}, arg, {}).state
        elif kind == "decline":
            self.state = dispatch(self.flow, self.state, {}, "decline_slot", {"slot": f"s{arg}"}).state
        else:
            self.state = dispatch(self.flow, self.state, {}, "correct_slot", {"slot": f"s{arg[0]}", "value": arg[1]}).state
            return
        for name, record in before.items():
            assert self.state.record(name) == record, "no corruption: a settled slot never changes"


@given(flows(), events, st.lists(st.booleans(), max_size=10))
@settings(max_examples=200, deadline=None)
def test_guarantees_hold_for_any_config_and_events(config: dict[str, Any], seq: list[Event], results: list[bool]) -> None:
    checker = Checker(compile_flow(config), results)
    checker.invoke("hi")
    for event in seq:
        checker.apply(event)
        if event[0] != "say":
            checker.invoke("")


records = st.builds(
    SlotRecord,
    status=st.sampled_from(STATUSES),
    value=st.none() | st.sampled_from(["x", "y", 3]),
    source=st.none() | st.just("they said so"),
)


@given(records, records)
def test_merge_rules(old: SlotRecord, new: SlotRecord) -> None:
    merged = merge_record(old, new)
    assert merged is old or merged is new
    if old.status in ("filled", "declined"):
        assert merged is old, "never regress a filled slot; declined is terminal"
    if new.status == "inferred" and not new.source:
        assert merged is old, "an unsourced inference is not state"
    if new.value is None and new.status in ("filled", "inferred", "pending", "deferred"):
        assert merged is old, "null never clobbers"
    if old.status != "empty" and new.status == "empty":
        assert merged is old


@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), records), max_size=12))
def test_merge_sequences_never_lose_a_settled_answer(proposals: list[tuple[str, SlotRecord]]) -> None:
    settled: dict[str, SlotRecord] = {}
    current: dict[str, SlotRecord] = {}
    for name, record in proposals:
        current[name] = merge_record(current.get(name, SlotRecord()), record)
        if name in settled:
            assert current[name] == settled[name]
        elif current[name].status in ("filled", "declined"):
            settled[name] = current[name]
