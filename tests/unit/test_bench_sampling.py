"""``scripts/bench_load --where``: CPU samples counted for the code that asked for the work.

Each case spends about a fifth of a second of CPU in one pattern of callers, with a module of
its own standing for the steward's code; the samples must go where the table says they go.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Callable
from types import FrameType, ModuleType

import pytest
from tests.bench_support.sampling import CpuSamples, steward_code
from tests.bench_support.where import Breakdown, section

SPIN_S = 0.2

OWNED = """
import json


def entry(work):
    return middle(work)


def middle(work):
    return work()


def spin():
    deadline = _now() + SPIN_S
    while _now() < deadline:
        sum(range(200))


def encode():
    data = [{"slot": i, "values": list(range(20))} for i in range(50)]
    deadline = _now() + SPIN_S
    while _now() < deadline:
        json.dumps(data, indent=1)


def _now():
    import time

    return time.process_time()
"""


@pytest.fixture(scope="module")
def owned(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    path = tmp_path_factory.mktemp("owned") / "stand_in.py"
    path.write_text(f"SPIN_S = {SPIN_S}\n{OWNED}", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("stand_in", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spin_here() -> None:  # the caller's own code (not measured, not a library)
    deadline = time.process_time() + SPIN_S
    while time.process_time() < deadline:
        sum(range(200))


def _sampled(owned: ModuleType, work: Callable[[], object]) -> CpuSamples:
    samples = CpuSamples(owned=lambda filename: filename == owned.__file__)
    with samples:
        work()
    assert samples.total >= 10, "the timer should fire during a fifth of a second of CPU"
    return samples


@pytest.mark.parametrize(
    ("case", "share"),
    [
        ("the measured code spins", 1.0),
        ("it calls into the standard library (json)", 1.0),
        ("it calls back into its caller's code, which spins", 0.0),
        ("the caller spins outside it", 0.0),
    ],
)
def test_each_sample_goes_to_the_code_that_asked_for_the_work(
    owned: ModuleType, case: str, share: float
) -> None:
    work: dict[str, Callable[[], object]] = {
        "the measured code spins": lambda: owned.entry(owned.spin),
        "it calls into the standard library (json)": lambda: owned.entry(owned.encode),
        "it calls back into its caller's code, which spins": lambda: owned.entry(_spin_here),
        "the caller spins outside it": _spin_here,
    }
    samples = _sampled(owned, work[case])
    assert abs(samples.share() - share) <= 0.1, (case, samples.total, samples.owned_samples)
    if share:  # counted under the outermost frame of the measured code: its entry point
        assert set(samples.entries) == {"stand_in:entry"}


def test_the_timer_and_the_handler_are_put_back() -> None:
    import signal

    before = signal.getsignal(signal.SIGPROF)
    with CpuSamples():
        pass
    assert signal.getsignal(signal.SIGPROF) == before
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_the_measured_code_installed_as_a_package_is_still_its_own() -> None:
    # Installed, the steward's files are under site-packages like any library's.
    installed = "/venv/lib/python3.12/site-packages/pipecat_steward/pipecat/hook.py"
    samples = CpuSamples()
    assert samples.entry(_frame_in(installed)) == "stand_in:entry_point"
    assert samples.entry(_frame_in("/venv/site-packages/pydantic/main.py")) is None


def _frame_in(filename: str) -> FrameType:
    """A frame whose code is ``entry_point`` of a file at ``filename``, called from here."""
    namespace: dict[str, object] = {"__name__": "stand_in", "sys": sys}
    code = compile("def entry_point():\n    return sys._getframe()\n", filename, "exec")
    exec(code, namespace)  # a frame with the file name a sample of it would see
    frame = namespace["entry_point"]()  # type: ignore[operator]
    assert isinstance(frame, FrameType)
    return frame


def test_the_steward_s_code_is_its_package_but_not_its_testing_fakes() -> None:
    assert steward_code("/x/lib/pipecat_steward/pipecat/hook.py")
    assert not steward_code("/x/lib/pipecat_steward/testing/scripted_llm.py")
    assert not steward_code("/x/site-packages/pipecat/services/llm_service.py")
    assert not steward_code(json.__file__)


def test_the_section_puts_the_difference_beside_the_steward_s_own_share() -> None:
    samples = CpuSamples()
    samples.entries.update({f"pipecat_steward.m:f{i}": 10 - i for i in range(10)})
    samples.total, samples.owned_samples = 1000, samples.entries.total()
    result = Breakdown("clinic", 20, 2.0, 2.3, samples)
    text = section([result])
    assert text.startswith("## Load (where the steward's CPU goes)\n")
    assert "steward/plain CPU **1.150×**, so the difference is 13.0%" in text
    assert "the steward's own code is **5.5%** of it (55 of 1000 samples" in text
    assert "| `pipecat_steward.m:f0` | 1.0% | 18.2% |" in text
    assert "| the 2 others | 0.3% | 5.5% |" in text  # 2 + 1 samples past the 8 listed
