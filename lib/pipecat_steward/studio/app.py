"""The studio's web app: the page, its JSON routes and the live event WebSocket.

Routes (relative, so the app also works mounted under a prefix, e.g. ``/studio`` beside
pipecat's runner):

- ``GET /``: the page; ``GET /static/…``: its stylesheet and script;
- ``GET /api/config``: the mode, the session to open first, where the voice client is;
- ``GET /api/agent``: the agent's steps, slots and variables; ``GET /api/picture``: its drawing;
- ``GET /api/sessions``: past and live sessions, newest first;
  ``GET /api/sessions/{id}/events``: one session's events, for replay;
- ``WS /ws/{id}``: one session's events, the backlog first, then live;
- ``POST /api/say``: in text mode, the caller's next line.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from pipecat_steward.events.hub import EventHub
from pipecat_steward.studio.agent_view import describe, load, picture
from pipecat_steward.studio.sessions import SessionSource

__all__ = ["Mode", "StudioConfig", "create_app"]

Mode = Literal["replay", "text", "voice"]
STATIC = Path(__file__).parent / "static"


@dataclass
class StudioConfig:
    """What one studio serves.

    Attributes:
        agent_dir: The agent folder.
        mode: ``replay`` (a stored session or a trace file), ``text`` or ``voice``.
        replay: The session id or trace file to open in replay mode.
        store: The event store URL (``sqlite:PATH``, ``redis://…``); None for none.
        voice_client: Where the voice client is served (voice mode), e.g. ``/client/``.
        env: The environment of live calls (provider settings).
        turn_timeout: Seconds a text-mode turn may take before the page is told it failed.
    """

    agent_dir: Path
    mode: Mode = "replay"
    replay: str | None = None
    store: str | None = None
    voice_client: str | None = None
    env: dict[str, str] = field(default_factory=lambda: {})
    turn_timeout: float = 300.0


class Say(BaseModel):
    """A caller's line in text mode."""

    text: str


@dataclass
class _Studio:
    """One studio's parts, shared by its routes."""

    config: StudioConfig
    view: dict[str, Any]
    hub: EventHub
    source: SessionSource
    first: str | None = None
    call: Any = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: FastAPI) -> AsyncIterator[None]:
        """Open the session to show first (a text call starts here) and close all at the end."""
        self.first = await _first_session(self.config, self.source)
        if self.config.mode == "text":
            from pipecat_steward.studio.text_call import TextCall

            self.first = f"text-{_stamp()}"
            env, limit = self.config.env or None, self.config.turn_timeout
            self.call = TextCall(self.config.agent_dir, self.hub, self.first, env, limit)
            await self.call.start()
        try:
            yield
        finally:
            if self.call is not None:
                await _bounded(self.call.stop(), "ending the text call")
            await self.hub.store.close()


def create_app(config: StudioConfig, hub: EventHub | None = None) -> FastAPI:
    """Build the studio app for ``config`` over ``hub`` (default: one on ``config.store``)."""
    view = describe(load(config.agent_dir)).json()
    hub = hub or EventHub(_store(config.store))
    titles = {s["id"]: s["title"] for s in view["steps"]}
    studio = _Studio(config, view, hub, SessionSource(hub, view["name"], titles))
    app = FastAPI(title="steward studio", lifespan=studio.lifespan)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _page_routes(app, studio)
    _session_routes(app, studio)
    return app


def _page_routes(app: FastAPI, studio: _Studio) -> None:
    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/config")
    async def settings() -> dict[str, Any]:
        return {
            "mode": studio.config.mode,
            "session": studio.first,
            "agent": studio.view["name"],
            "voice_client": studio.config.voice_client,
        }

    @app.get("/api/agent")
    async def agent_view() -> dict[str, Any]:
        return studio.view

    @app.get("/api/picture")
    async def agent_picture() -> Response:
        media, body = picture(studio.config.agent_dir)
        return Response(body, media_type=media)


def _session_routes(app: FastAPI, studio: _Studio) -> None:
    source = studio.source

    @app.get("/api/sessions")
    async def sessions() -> list[dict[str, Any]]:
        return await source.sessions()

    @app.get("/api/sessions/{session}/events")
    async def session_events(session: str) -> list[dict[str, Any]]:
        events = await source.events(session)
        if not events:
            raise HTTPException(404, f"no session {session!r} in the store")
        return events

    @app.websocket("/ws/{session}")
    async def live(socket: WebSocket, session: str) -> None:
        await socket.accept()
        sender = asyncio.ensure_future(_send_events(socket, source, session))
        listener = asyncio.ensure_future(_until_closed(socket))
        # A page that goes away must end its subscription now, not at the next event.
        await asyncio.wait((sender, listener), return_when=asyncio.FIRST_COMPLETED)
        for task in (sender, listener):
            task.cancel()
        await asyncio.gather(sender, listener, return_exceptions=True)

    @app.post("/api/say")
    async def say(line: Say) -> dict[str, Any]:
        if studio.call is None:
            raise HTTPException(409, "this studio is not in text mode (start it with --text)")
        try:
            await studio.call.say(line.text)
        except TimeoutError:
            raise HTTPException(504, "the bot did not finish its turn in time") from None
        return {"ok": True}


async def _bounded(work: Coroutine[Any, Any, None], what: str, seconds: float = 10.0) -> None:
    """Run ``work`` for at most ``seconds``: a model still streaming must not hold the exit.

    ``asyncio.wait`` rather than ``wait_for``: the latter also waits for the cancelled work to
    finish, which a pipeline in the middle of a response may not do promptly.
    """
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        from loguru import logger

        task.cancel()
        logger.warning(f"steward studio: {what} took over {seconds:.0f}s; leaving it")


async def _send_events(socket: WebSocket, source: SessionSource, session: str) -> None:
    async for event in source.subscribe(session):
        await socket.send_json(event)
    await socket.close()


async def _until_closed(socket: WebSocket) -> None:
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            await socket.receive_text()


async def _first_session(config: StudioConfig, source: SessionSource) -> str | None:
    if config.replay:
        return await source.resolve(config.replay)
    listed = await source.sessions()
    return listed[0]["id"] if listed else None


def _store(spec: str | None) -> Any:
    from pipecat_steward.events.store import open_event_store

    return open_event_store(spec or "memory:")


def _stamp() -> str:
    import time

    return time.strftime("%Y%m%d-%H%M%S", time.gmtime())
