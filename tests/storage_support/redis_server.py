"""Start a throwaway ``redis-server`` on 127.0.0.1 at a free port (no persistence).

``redis-server`` is the Debian package ``scripts/setup`` installs. When it is missing the tests
FAIL with that instruction: the Redis backend is part of the contract, not an optional extra.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.process_support import free_port, stop_process

INSTALL_HINT = (
    "redis-server is not installed; run scripts/setup (it installs the Debian package "
    "redis-server) or `apt-get install -y redis-server`"
)


def redis_binary() -> str:
    """Path of ``redis-server``; fails the test with the install instruction when missing."""
    found = shutil.which("redis-server")
    if found is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
    return found


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Run redis-server in ``folder`` until the block exits; yield its ``redis://`` URL."""
    port = free_port()
    args = [
        redis_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(folder),
        "--protected-mode",
        "yes",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not _ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr and proc.poll() is not None else ""
                pytest.fail(f"redis-server did not start on port {port}: {err}", pytrace=False)
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop_process(proc, timeout=5)
        if proc.stderr:
            proc.stderr.close()
