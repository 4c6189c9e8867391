"""``scripts/bench_load``: the CPU goal decided from an interval (not from one noisy ratio), the
collector's share, memory per live call, and any bot folder as a subject."""

from __future__ import annotations

import asyncio
import gc
import logging
import tracemalloc
from dataclasses import asdict
from types import ModuleType

import pytest
from pipecat.frames.frames import LLMFullResponseStartFrame
from pipecat.observers.base_observer import BaseObserver, FramePushed
from tests.bench_support import load, script_module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return script_module("bench_load")


def runs(plain: list[float], steward: list[float]) -> tuple[load.Run, load.Run]:
    return (
        load.Run("plain", 1, cpu_ms_per_turn=plain),
        load.Run("steward", 1, cpu_ms_per_turn=steward),
    )


def test_a_steady_ratio_has_no_spread() -> None:
    plain = [10.0, 14.0, 9.0, 12.0]
    ratio = load.cpu_ratio(*runs(plain, [1.3 * p for p in plain]))
    assert (ratio.value, ratio.low, ratio.high) == pytest.approx((1.3, 1.3, 1.3))


def test_noisy_rounds_give_a_repeatable_interval_around_the_ratio() -> None:
    plain = [10.0, 14.0, 9.0, 12.0, 11.0, 13.0, 8.0, 15.0]
    steward = [13.0, 15.0, 12.0, 14.0, 12.0, 17.0, 10.0, 16.0]
    first = load.cpu_ratio(*runs(plain, steward))
    assert first.value == pytest.approx(sum(steward) / sum(plain))
    assert first.low < first.value < first.high
    assert load.cpu_ratio(*runs(plain, steward)) == first  # seeded: the docs reproduce


def test_rounds_of_several_processes_are_resampled_by_process() -> None:
    """Steady within each process, 1.1 in one and 1.3 in the other: the interval spans both."""
    plain, steward = runs([10.0] * 6, [11.0, 11.0, 11.0, 13.0, 13.0, 13.0])
    one_process = load.cpu_ratio(plain, steward)
    steward.process_of_round = [0, 0, 0, 1, 1, 1]
    two_processes = load.cpu_ratio(plain, steward)
    assert two_processes.value == one_process.value == pytest.approx(1.2)
    assert two_processes.low == pytest.approx(1.1)
    assert two_processes.high == pytest.approx(1.3)
    assert one_process.high - one_process.low < two_processes.high - two_processes.low


def test_merging_processes_keeps_every_round_and_its_process() -> None:
    first = [
        load.Run(
            "plain", 2, calls=2, completed=2, turns=8, cpu_ms_per_turn=[9.0], gc_ms_per_turn=[1.0]
        )
    ]
    second = [
        load.Run(
            "plain",
            2,
            calls=4,
            completed=3,
            errors=["x"],
            cpu_ms_per_turn=[8.0, 7.0],
            gc_ms_per_turn=[2.0, 0.5],
        )
    ]
    (merged,) = load.merge([first, second])
    assert (merged.variant, merged.n, merged.calls, merged.completed) == ("plain", 2, 6, 5)
    assert merged.errors == ["x"] and merged.turns == 8
    assert merged.cpu_ms_per_turn == [9.0, 8.0, 7.0]
    assert merged.gc_ms_per_turn == [1.0, 2.0, 0.5]
    assert load.collector_share(merged) == pytest.approx(3.5 / 24.0)
    assert merged.process_of_round == [0, 1, 1]


def test_the_collector_clock_times_real_collections() -> None:
    """A collection over many live cycles takes time; the clock sees it, and only while added."""
    cycles = []
    for _ in range(20_000):
        node: list[object] = []
        node.append(node)
        cycles.append(node)
    with load.CollectorClock() as clock:
        assert clock in gc.callbacks
        gc.collect()
    timed = clock.seconds
    assert timed > 0 and clock not in gc.callbacks
    gc.collect()
    assert clock.seconds == timed


async def test_a_round_reports_the_collector_time_of_its_calls(bench: ModuleType) -> None:
    """Calls that leave cyclic garbage make the round's collector time grow with them."""

    async def call(latencies: list[float]) -> str:
        for _ in range(30_000):
            node: list[object] = []
            node.append(node)
        return "same"

    run = load.Run("plain", 2)
    await bench.sweep_one(run, call, bench._canonical("same"), turns=3, min_calls=4)
    assert run.completed == 4 and run.differing == 0
    (gc_ms,) = run.gc_ms_per_turn
    (cpu_ms,) = run.cpu_ms_per_turn
    assert 0 < gc_ms <= cpu_ms * 1.5  # wall time of collections, next to process CPU time
    assert not any(isinstance(c, load.CollectorClock) for c in gc.callbacks)


def test_any_bot_folder_can_be_benched_with_a_named_scenario(bench: ModuleType) -> None:
    chosen = bench.parse_bots("bella_notte, clinic=charge_me_now.yaml")
    assert chosen == {
        "bella_notte": bench.ROOT / "bots/bella_notte/scenarios/happy_path.yaml",
        "clinic": bench.ROOT / "bots/clinic/scenarios/charge_me_now.yaml",
    }
    assert all(path.is_file() for path in chosen.values())


def test_bad_bots_are_all_named_in_one_error(bench: ModuleType) -> None:
    with pytest.raises(ValueError) as caught:
        bench.parse_bots("my_bot,bella_notte=nope.yaml,lead_capture,clinic=personas.yaml")
    message = str(caught.value)
    assert "my_bot: no default scenario; name one as my_bot=<file in scenarios/>" in message
    assert "bella_notte: bots/bella_notte/scenarios/nope.yaml does not exist" in message
    assert "clinic: bots/clinic/scenarios/personas.yaml holds 0 scripted scenarios" in message
    assert "lead_capture" not in message


def test_the_command_line_rejects_a_bot_without_a_scenario(bench: ModuleType) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.main(["--bots", "my_bot", "--no-write"])
    assert exited.value.code == 2


async def test_a_live_call_is_charged_what_it_holds_while_the_others_run() -> None:
    """Each call holds 200 kB until every call started: the peak per call is at least that."""
    started: list[bytearray] = []

    async def call(latencies: list[float]) -> None:
        started.append(bytearray(200_000))
        while len(started) < 5:
            await asyncio.sleep(0)

    per_call = await load.live_call_bytes(call, 5)
    assert 200_000 <= per_call < 260_000
    assert not tracemalloc.is_tracing()


def test_memory_figures_are_each_the_median_over_processes() -> None:
    figures = [
        (1.0, 9.0, 50, 100.0, 130.0),
        (3.0, 7.0, 50, 120.0, 125.0),
        (2.0, 8.0, 50, 90.0, 200.0),
    ]
    dumps = [{"bot": {"memory": asdict(load.Memory(*f))}} for f in figures]
    assert load.median_memory(dumps, "bot") == load.Memory(2.0, 8.0, 50, 100.0, 130.0)
    assert type(load.median_memory(dumps, "bot").live_n) is int


class _Inferences(BaseObserver):
    """Counts the LLM service's responses in a pipeline (stands in for bench_load's Latency)."""

    def __init__(self, counts: list[int]) -> None:
        super().__init__()
        self.counts = counts
        counts.append(0)

    async def on_push_frame(self, data: FramePushed) -> None:
        if data.first_push and isinstance(data.frame, LLMFullResponseStartFrame):
            self.counts[-1] += 1


@pytest.mark.parametrize(
    ("bot", "file"),
    [
        ("clinic", "no_double_charge.yaml"),
        ("clinic", "appointment_to_payment.yaml"),
        ("bella_notte", "happy_path.yaml"),
        ("lead_capture", "seed_003_four_turns.yaml"),
        ("order_desk", "cancel_order.yaml"),
    ],
)
async def test_the_plain_bot_runs_every_inference_the_steward_bots_model_ran(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, bot: str, file: str
) -> None:
    """The plain variant is charged for the model's work: its calls in as many inferences.

    A steward's model that calls three tools one after another runs three inferences; a plain
    bot handed all three in one response would do less of the same job. The plain bot may run
    more (it reaches the backend and says the engine's words through its model).
    """
    folder = bench.ROOT / "bots" / bot
    agent = bench.load_agent(folder)
    scenario = bench.load_scenario(folder / "scenarios" / file)
    script = bench.plain_script(agent, scenario, await bench.run_scenario(agent, scenario))
    counts: list[int] = []
    monkeypatch.setattr(bench, "Latency", lambda samples: _Inferences(counts))
    assert (
        await bench.plain_call(agent, scenario, script, [])
        == (await bench.steward_call(agent, scenario, []))[0]
    )
    plain, steward = counts
    assert plain >= steward


async def test_both_calls_keep_the_scenarios_deadlines(
    bench: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """A backend that never answers: each variant gives up at the scenario's task deadline.

    The steward's call is set up from the scenario as its single-call reference is (timeouts
    included), and the plain bot's handlers carry the same deadline, as pipecat's per-tool
    timeout, so its call ends too.
    """
    folder = bench.ROOT / "bots" / "bella_notte"
    agent = bench.load_agent(folder)
    scenario = bench.load_scenario(folder / "scenarios" / "executor_timeout.yaml")
    assert scenario.task_timeout_s == 0.3
    script = bench.plain_script(agent, scenario, await bench.run_scenario(agent, scenario))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pipecat_steward.runtime.session"):
        spoken, _ = await bench.steward_call(agent, scenario, [])
    assert "find_available_times gave no result within 0.3s" in caplog.text
    assert await bench.plain_call(agent, scenario, script, []) == spoken
