"""``steward rehearse AGENT_DIR``: talk to an agent live, in the browser, over SmallWebRTC.

It serves pipecat's development runner (the prebuilt voice client at ``/client``) with a
cascaded bot: speech-to-text → the agent's steward-hooked LLM → text-to-speech, and the studio
at ``/studio/`` (the same page as ``steward studio``): the voice client beside the transcript,
slot board, checklist and event log of the call, which is kept in the event store (``--store``)
for replay. Providers come from the environment:

- LLM: ``OPENAI_API_KEY``, or ``STEWARD_LLM_BASE_URL`` for a self-hosted OpenAI-compatible
  server (``STEWARD_LLM_API_KEY`` if it wants a key; ``STEWARD_LLM_MODEL`` names the model);
- speech-to-text: ``DEEPGRAM_API_KEY``, else OpenAI's (``OPENAI_API_KEY``);
- text-to-speech: ``CARTESIA_API_KEY`` (``CARTESIA_VOICE_ID`` picks the voice), else OpenAI's.

When a provider has none of its variables the command names each missing variable and what
it is for, and exits 2. ``build_rehearsal`` builds the whole pipeline without starting
anything, so it can be tested offline.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipecat_steward.cli.arguments import PORT
from pipecat_steward.exceptions import StewardError

__all__ = ["NEEDS", "VARIABLES", "Rehearsal", "add_parser", "build_rehearsal", "missing", "run"]

VARIABLES: dict[str, str] = {
    "OPENAI_API_KEY": "OpenAI API key: the LLM, and speech-to-text / text-to-speech when no "
    "Deepgram / Cartesia key is set",
    "STEWARD_LLM_BASE_URL": "base URL of a self-hosted OpenAI-compatible chat-completions "
    "server to use as the LLM instead of OpenAI (e.g. http://127.0.0.1:8080/v1)",
    "DEEPGRAM_API_KEY": "Deepgram API key: speech-to-text (streaming)",
    "CARTESIA_API_KEY": "Cartesia API key: text-to-speech (streaming)",
}
NEEDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("LLM", ("OPENAI_API_KEY", "STEWARD_LLM_BASE_URL")),
    ("speech-to-text", ("DEEPGRAM_API_KEY", "OPENAI_API_KEY")),
    ("text-to-speech", ("CARTESIA_API_KEY", "OPENAI_API_KEY")),
)
"""Each provider role and the variables that can serve it (any one is enough)."""

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_CARTESIA_VOICE = "71a7ad14-091c-4e8e-a314-022ece01c121"  # Cartesia's "British Reading Lady"


def add_parser(sub: Any) -> None:
    """Register ``steward rehearse``."""
    parser = sub.add_parser(
        "rehearse", help="talk to an agent live in the browser (SmallWebRTC, prebuilt client)"
    )
    parser.add_argument("agent", type=Path, help="agent folder (agent.yaml + tools.py)")
    parser.add_argument("--host", default="localhost", help="address to serve on")
    parser.add_argument("--port", type=PORT, default=7860, help="port to serve on")
    parser.add_argument("--store", help="event store: sqlite:PATH | redis://HOST:PORT/DB")
    parser.set_defaults(func=run)


def missing(env: Mapping[str, str]) -> list[tuple[str, tuple[str, ...]]]:
    """The provider roles none of whose variables is set, with the variables that would serve."""
    return [(role, names) for role, names in NEEDS if not any(env.get(n) for n in names)]


def explain(gaps: list[tuple[str, tuple[str, ...]]]) -> str:
    """A message naming each missing variable and what it is for."""
    lines = ["steward rehearse: cannot start a live bot; provider settings are missing:"]
    lines += [f"  {role}: set {' or '.join(names)}" for role, names in gaps]
    lines.append("What each variable is for:")
    named = dict.fromkeys(n for _, names in gaps for n in names)
    lines += [f"  {name}: {VARIABLES[name]}" for name in named]
    return "\n".join(lines)


def agent_loads(agent: Path, command: str) -> bool:
    """Whether the agent folder loads; when not, the reason is printed after ``command:``."""
    from pipecat_steward.agent.loader import load_agent

    try:
        load_agent(agent)
    except (StewardError, ValueError, OSError) as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return False
    return True


def run(args: argparse.Namespace) -> int:
    """Check the agent and the provider settings, then serve the live bot until stopped."""
    import os

    if not agent_loads(args.agent, "steward rehearse"):
        return 2
    gaps = missing(os.environ)
    if gaps:
        print(explain(gaps), file=sys.stderr)
        return 2
    serve(args.agent, args.host, args.port, getattr(args, "store", None))
    return 0


@dataclass
class Rehearsal:
    """A built, not yet running, live bot.

    Attributes:
        worker: The pipeline worker (give it to a ``WorkerRunner``).
        steward: The agent's steward, attached to the LLM.
        services: The speech-to-text, LLM and text-to-speech services, by role.
        supervision: The monitor and extractor attached for the call (None when the agent
            needs neither, no logic_slm resolves, or ``STEWARD_MONITOR_ENABLED=0``).
    """

    worker: Any
    steward: Any
    services: dict[str, Any]
    supervision: Any = None


def llm_service(env: Mapping[str, str]) -> Any:
    """The OpenAI (or OpenAI-compatible, ``STEWARD_LLM_BASE_URL``) LLM service of a live call."""
    from pipecat.services.openai.llm import OpenAILLMService

    base_url = env.get("STEWARD_LLM_BASE_URL") or None
    key = env.get("STEWARD_LLM_API_KEY") if base_url else None
    model = env.get("STEWARD_LLM_MODEL") or DEFAULT_MODEL
    settings = OpenAILLMService.Settings(model=model)
    return OpenAILLMService(
        api_key=key or env.get("OPENAI_API_KEY") or "none", base_url=base_url, settings=settings
    )


def _stt(env: Mapping[str, str]) -> Any:
    if env.get("DEEPGRAM_API_KEY"):
        from pipecat.services.deepgram.stt import DeepgramSTTService

        return DeepgramSTTService(api_key=env["DEEPGRAM_API_KEY"])
    from pipecat.services.openai.stt import OpenAISTTService

    return OpenAISTTService(api_key=env["OPENAI_API_KEY"])


def _tts(env: Mapping[str, str]) -> Any:
    if env.get("CARTESIA_API_KEY"):
        from pipecat.services.cartesia.tts import CartesiaTTSService

        voice = env.get("CARTESIA_VOICE_ID") or DEFAULT_CARTESIA_VOICE
        settings = CartesiaTTSService.Settings(voice=voice)
        return CartesiaTTSService(api_key=env["CARTESIA_API_KEY"], settings=settings)
    from pipecat.services.openai.tts import OpenAITTSService

    return OpenAITTSService(api_key=env["OPENAI_API_KEY"])


def build_rehearsal(
    agent_dir: str | Path, transport: Any, env: Mapping[str, str], events: Any = None
) -> Rehearsal:
    """Build the live pipeline for ``agent_dir`` on ``transport``; nothing starts or connects.

    ``events`` is the call's event publisher (e.g. from the studio's ``EventHub``); the steward
    makes its own in-memory one when it is omitted.

    ``transport.input() → STT → user aggregator (Silero VAD) → LLM (steward attached) → TTS →
    transport.output() → assistant aggregator``, in a worker with the steward's observers.
    """
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import (
        LLMContextAggregatorPair,
        LLMUserAggregatorParams,
    )

    from pipecat_steward.pipecat.steward import Steward
    from pipecat_steward.pipecat.supervise import attach_supervision

    services = {"stt": _stt(env), "llm": llm_service(env), "tts": _tts(env)}
    steward = Steward.from_folder(agent_dir, events=events)
    steward.attach(services["llm"])
    supervision = attach_supervision(steward, services["llm"], env=env)
    params = LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer())
    user, assistant = LLMContextAggregatorPair(LLMContext(), user_params=params)
    stages = [transport.input(), services["stt"], user, services["llm"], services["tts"]]
    pipeline = Pipeline([*stages, transport.output(), assistant])
    worker = PipelineWorker(
        pipeline, params=PipelineParams(enable_metrics=True), observers=steward.observers
    )
    return Rehearsal(worker, steward, services, supervision)


def _bot(agent_dir: Path, hub: Any = None) -> Any:
    """The runner's ``bot(runner_args)`` entry point for ``agent_dir`` (events go to ``hub``)."""

    async def bot(runner_args: Any) -> None:
        import os

        from pipecat.frames.frames import LLMRunFrame
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport
        from pipecat.workers.runner import WorkerRunner

        from pipecat_steward.studio.live import VariableWatch

        params = TransportParams(audio_in_enabled=True, audio_out_enabled=True)
        transport = SmallWebRTCTransport(runner_args.webrtc_connection, params)
        session = str(getattr(runner_args, "session_id", None) or id(transport))
        events = await hub.open(session) if hub is not None else None
        rehearsal = build_rehearsal(agent_dir, transport, os.environ, events)
        worker = rehearsal.worker
        VariableWatch(rehearsal.steward, rehearsal.steward.events.publisher).attach()

        @transport.event_handler("on_client_connected")
        async def _greet(_transport: Any, _client: Any) -> None:
            await worker.queue_frames([LLMRunFrame()])  # the engine decides the opening

        @transport.event_handler("on_client_disconnected")
        async def _leave(_transport: Any, _client: Any) -> None:
            await worker.cancel()

        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        try:
            await runner.run()
        finally:
            # Its own publisher only (the hub forgets it): a caller who reconnected to this
            # session has a live one of its own by now, which must not end with this call.
            await rehearsal.steward.events.aclose("ended", "the caller left")

    return bot


def serve(agent_dir: Path, host: str, port: int, store: str | None = None) -> None:
    """Serve pipecat's runner (WebRTC, prebuilt client) and the studio at ``/studio/``.

    The runner looks for a ``bot`` function on ``__main__`` and parses ``sys.argv``; both are
    set here, since this command is not the script the runner expects to be started as.
    """
    from pipecat.runner import run as runner

    from pipecat_steward.events.hub import EventHub
    from pipecat_steward.events.store import open_event_store
    from pipecat_steward.studio import StudioConfig, create_app

    hub = EventHub(open_event_store(store or "memory:"))
    config = StudioConfig(agent_dir.resolve(), mode="voice", store=store, voice_client="/client/")
    runner.app.mount("/studio", create_app(config, hub=hub))
    setattr(sys.modules["__main__"], "bot", _bot(agent_dir.resolve(), hub))  # noqa: B010
    sys.argv = [sys.argv[0], "-t", "webrtc", "--host", host, "--port", str(port)]
    print(f"steward rehearse: open http://{host}:{port}/studio/ (the voice client alone: /client/)")
    runner.main()
