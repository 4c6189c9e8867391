"""``steward studio`` in its own process, as a user starts it, for the studio's tests."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import urllib.request
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

__all__ = ["CLINIC", "REPO", "studio"]

REPO = Path(__file__).resolve().parents[2]
CLINIC = REPO / "bots" / "clinic"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}api/config", timeout=1):
            return True
    except OSError:
        return False


@asynccontextmanager
async def studio(
    args: list[str], env: Mapping[str, str], log: Path, page: str = "/"
) -> AsyncIterator[str]:
    """``steward studio bots/clinic ARGS`` in its own process; yields the page's URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}{page}"
    command = [
        sys.executable,
        "-m",
        "pipecat_steward.cli.main",
        "studio",
        str(CLINIC),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *args,
    ]
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *command, env={**os.environ, **env}, stdout=out, stderr=out, cwd=REPO
        )
        try:
            async with asyncio.timeout(120):
                while not await asyncio.to_thread(_up, url):
                    assert proc.returncode is None, log.read_text()
                    await asyncio.sleep(0.2)
            yield url
        finally:
            await _stop(proc)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Stop the studio like Ctrl-C does (it closes the call and the store); kill it if stuck."""
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError("the studio did not stop within 30 s of Ctrl-C") from None
