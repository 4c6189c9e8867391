"""Local server processes for tests: a free port to start one on, and a clean stop."""

from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Ask ``proc`` to end; kill it when it has not ended after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
