"""Headless Chromium driven over the DevTools protocol (``websockets``), for the studio's tests.

``chromium()`` finds Debian's ``chromium`` (``scripts/setup`` installs it); ``Browser`` starts it
headless on a throwaway profile, opens one page and offers what the tests need: navigate,
evaluate JavaScript, wait for a condition in the page, and take a screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import tempfile
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import websockets

__all__ = ["Browser", "chromium"]

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


def chromium() -> str | None:
    """The path of a Chromium binary, or None when none is installed."""
    return next((p for c in _CANDIDATES if (p := shutil.which(c))), None)


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol."""

    def __init__(
        self, binary: str, *, width: int = 1480, height: int = 960, failures: Path | None = None
    ) -> None:
        self.binary = binary
        self.failures = failures
        self.size = (width, height)
        self._proc: asyncio.subprocess.Process | None = None
        self._ws: Any = None
        self._ids = itertools.count(1)
        self._profile = tempfile.TemporaryDirectory(prefix="studio-chromium-")
        self.errors: list[str] = []

    async def __aenter__(self) -> Self:
        width, height = self.size
        self._proc = await asyncio.create_subprocess_exec(
            self.binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--remote-debugging-port=0",
            f"--user-data-dir={self._profile.name}",
            f"--window-size={width},{height}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        port = await self._devtools_port()
        page = await asyncio.to_thread(_page_socket, port)
        self._ws = await websockets.connect(page, max_size=64 * 2**20)
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._proc is not None and self._proc.returncode is None:
            self._proc.terminate()
            await self._proc.wait()
        self._profile.cleanup()

    async def _devtools_port(self) -> int:
        assert self._proc is not None and self._proc.stderr is not None
        async with asyncio.timeout(30):
            while line := (await self._proc.stderr.readline()).decode():
                if "DevTools listening on ws://" in line:
                    return int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        raise RuntimeError("chromium exited before opening its DevTools port")

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call one DevTools method and return its result (events in between are skipped)."""
        ident = next(self._ids)
        await self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            reply = json.loads(await self._ws.recv())
            self._note(reply)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _note(self, message: dict[str, Any]) -> None:
        """Keep the page's uncaught errors and console errors (timeouts report them)."""
        params = message.get("params", {})
        if message.get("method") == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(str(details.get("exception", {}).get("description") or details))
        elif message.get("method") == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a)) for a in params.get("args", [])))

    async def goto(self, url: str) -> None:
        """Open ``url`` and wait until the studio page says it is ready."""
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.body && document.body.dataset.ready === '1'")

    async def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises are awaited)."""
        result = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (TimeoutError naming it if never)."""
        try:
            async with asyncio.timeout(timeout):
                while not (value := await self.eval(expression)):
                    await asyncio.sleep(0.1)
                return value
        except TimeoutError:
            if self.failures is not None:  # what the page showed when it gave up
                await self.screenshot(self.failures)
            errors = "; ".join(self.errors) or "none"
            raise TimeoutError(
                f"the page never satisfied: {expression} (page errors: {errors})"
            ) from None

    async def screenshot(self, path: Path) -> Path:
        """Save a PNG of the page as it is now."""
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


def _page_socket(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
        targets = json.load(reply)
    return next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
