"""A stale worker stops driving the call: two real pipelines, one SQLite file or one Redis.

Worker A takes a cancellation up to its confirmation; worker B resumes the same call from the
store and completes it. When the caller's "yes" still reaches A, A's save conflicts: A hides
every tool, fires no executor (the backend acts once), tells the client (``steward_conflict``
RTVI message) and the log, and the app's listener ends A's pipeline.
"""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loguru import logger
from pipecat.frames.frames import EndFrame
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame
from tests.storage_support.redis_server import redis_server

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.pipecat.steward import Steward
from pipecat_steward.runtime.checkpointing import Checkpointer
from pipecat_steward.storage.checkpoints import Identity, open_store
from pipecat_steward.testing.pipeline import TextPipeline
from pipecat_steward.testing.scenario import ScenarioInference
from pipecat_steward.testing.scripted_llm import FunctionStep, ScriptedLLM
from pipecat_steward.testing.simulate import ScriptedModel, scenario_step, settle

AGENT = Path(__file__).resolve().parents[2] / "bots" / "order_desk"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


class ServerMessages(BaseObserver):
    """Every RTVI server message pushed in the pipeline."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[dict[str, Any]] = []

    async def on_push_frame(self, data: FramePushed) -> None:
        if data.first_push and isinstance(data.frame, RTVIServerMessageFrame):
            self.data.append(dict(data.frame.data))


class Worker:
    """One bot worker: a steward on a real pipeline with a scripted model."""

    def __init__(self, spec: str, identity: Identity, **options: Any) -> None:
        self.store = open_store(spec)
        checkpointer = Checkpointer(self.store, identity)
        self.steward = Steward(load_agent(AGENT), checkpointer=checkpointer, **options)
        self.model = ScriptedModel()
        self.llm = ScriptedLLM([FunctionStep(self.model) for _ in range(40)])
        self.steward.attach(self.llm)
        self.messages = ServerMessages()
        self.pipeline = TextPipeline(self.llm, observers=[*self.steward.observers, self.messages])

    async def __aenter__(self) -> Worker:
        self.resumed = await self.steward.start()
        await self.pipeline.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self.pipeline.worker.has_finished():
            await self.pipeline.stop()
        await self.store.close()

    async def turn(self, text: str, *calls: tuple[str, dict[str, Any]]) -> None:
        inference = {"calls": [{"name": n, "args": a} for n, a in calls]}
        self.model.queue = (
            [scenario_step(ScenarioInference.model_validate(inference))] if calls else []
        )
        await self.pipeline.say(text)
        await settle(self.pipeline, self.steward)


def effects(ledger: Path) -> list[str]:
    return [e["tool"] for e in json.loads(ledger.read_text())["effects"]]


@pytest.mark.parametrize(
    ("backend", "client"),
    [("sqlite", True), ("redis", True), ("sqlite", False)],
    ids=["sqlite", "redis", "sqlite-no-client"],
)
async def test_a_stale_worker_stops_and_the_app_ends_its_pipeline(
    backend: str, client: bool, tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without a client (``client_messages=False``) the listener is told all the same.
    ledger = tmp_path / "ledger.json"
    monkeypatch.setenv("STEWARD_ORDER_DESK_LEDGER", str(ledger))
    spec = f"sqlite:{tmp_path / 'calls.db'}" if backend == "sqlite" else redis_url
    identity = Identity("acme", "order_desk", tmp_path.name)
    logged: list[str] = []
    sink = logger.add(lambda m: logged.append(str(m)), level="WARNING")
    try:
        async with Worker(spec, identity, client_messages=client) as a:
            told: list[dict[str, Any]] = []

            @a.steward.on_conflict
            async def hand_over(message: dict[str, Any]) -> None:
                told.append(message)
                await a.pipeline.worker.queue_frame(EndFrame())  # the app ends this worker

            await a.turn(
                "I want to cancel my order", ("start_retail_order_cancel", {"quote": "cancel"})
            )
            await a.turn("It's PED-1001", ("set_order_id", {"order_id": "PED-1001"}))
            async with Worker(spec, identity) as b:
                assert b.resumed
                await b.turn("yes")
                assert effects(ledger) == ["cancel_order"]
                await a.turn("yes")
                assert a.steward.session.conflict is not None
            assert effects(ledger) == ["cancel_order"], "the stale worker fired no executor"
            assert [c.name for t in a.steward.session.turns for c in t.fired][-1:] == [
                "cancel_order"
            ]
            assert a.steward.session.turns[-1].fired[-1].outcome == "refused"
            assert [m["type"] for m in told] == ["steward_conflict"]
            assert told[0]["session"] == identity.scope
            conflicts = [m for m in a.messages.data if m.get("type") == "steward_conflict"]
            assert conflicts == (told if client else [])
            assert a.llm.inferences[-1].visible_tools == (), "no tool at all after the conflict"
            assert a.pipeline.worker.has_finished(), "the listener ended the stale pipeline"
        store = open_store(spec)
        stored = await store.load(identity)
        await store.close()
    finally:
        logger.remove(sink)
    assert stored is not None and '"COMPLETED"' in str(stored.payload), "B's state stands"
    assert any("steward_conflict" in line for line in logged)


async def test_a_stale_session_refuses_every_tool_and_hides_them(tmp_path: Path) -> None:
    from pipecat_steward.runtime.transactions import TransactionSession

    first = open_store(f"sqlite:{tmp_path / 'c.db'}")
    second = open_store(f"sqlite:{tmp_path / 'c.db'}")
    identity = Identity("acme", "order_desk", "s")
    agent = load_agent(AGENT)
    a = TransactionSession(agent, checkpointer=Checkpointer(first, identity))
    b = TransactionSession(agent, checkpointer=Checkpointer(second, identity))
    try:
        a.decide("hello", first_turn=True)
        await a.save()
        await b.restore()
        b.decide("cancel my order")
        await b.save()
        a.decide("cancel my order")
        await a.save()  # conflicts: b advanced the call
        action = a.decide("PED-1001")
        refused = a.tool_call("start_retail_order_cancel", {})
        gated = await a.agent_tool_call("check_cancellable", {"order_id": "PED-1001"})
    finally:
        await first.close()
        await second.close()
    assert a.conflict is not None and a.conflict["type"] == "steward_conflict"
    assert action.visible_tools == frozenset() and not action.calls and not action.preempt
    assert refused.outcome == "refused" and refused.result["error_code"] == "steward_conflict"
    assert gated.outcome == "refused"


async def test_a_stale_speech_to_speech_worker_stops_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipecat_steward.runtime.transactions import TransactionSession
    from pipecat_steward.testing.script import Call
    from pipecat_steward.testing.simulate_s2s import realtime_run

    ledger = tmp_path / "ledger.json"
    monkeypatch.setenv("STEWARD_ORDER_DESK_LEDGER", str(ledger))
    spec, identity = f"sqlite:{tmp_path / 'calls.db'}", Identity("acme", "order_desk", "s2s")
    mine, theirs = open_store(spec), open_store(spec)
    told: list[dict[str, Any]] = []
    try:
        async with realtime_run(
            load_agent(AGENT), checkpointer=Checkpointer(mine, identity)
        ) as run:
            run.steward.on_conflict(told.append)
            start = Call("start_retail_order_cancel", {"order_id": "PED-1001", "quote": "cancel"})
            await run.turn("cancel PED-1001", [[start]])
            other = TransactionSession(
                load_agent(AGENT), checkpointer=Checkpointer(theirs, identity)
            )
            assert await other.restore()
            other.decide("hello again")
            await other.save()  # another worker advanced the call
            await run.turn("yes")
            await run.turn(
                "cancel order PED-1003",
                [[Call("start_retail_order_cancel", {"order_id": "PED-1003"})]],
            )
            updates = [e["session"] for e in run.fake.of_type("session.update")]
    finally:
        await mine.close()
        await theirs.close()
    assert [m["type"] for m in told] == ["steward_conflict"]
    assert not ledger.exists() or effects(ledger) == [], "the stale S2S worker fired no executor"
    assert not updates[-1].get("tools"), "no tool is advertised after the conflict"
    fired = [c for t in run.steward.session.turns for c in t.fired if c.name == "cancel_order"]
    assert [c.outcome for c in fired] == ["refused"]
    assert [c.outcome for c in run.steward.session.turns[-1].llm_calls] == ["refused"]
