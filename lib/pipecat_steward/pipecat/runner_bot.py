"""An agent folder as a bot for pipecat's development runner, so ``pipecat eval`` can call it.

An example bot's ``bot.py`` is three lines on top of this module::

    from pipecat_steward.pipecat.runner_bot import runner_bot, serve
    bot = runner_bot(Path(__file__).parent)
    if __name__ == "__main__":
        serve()

``python bots/clinic/bot.py`` then serves the runner on ``localhost:7860``; ``pipecat eval run
--bot-url ws://localhost:7860/ws bots/clinic/scenarios`` plays the folder's scenario files
against it, scripted turns and persona simulations alike, with a real LLM. The harness sends the
caller's turns as text (or speech, for audio scenarios) and reads the bot's replies.

Providers come from the environment, as for ``steward rehearse``: the LLM from
``OPENAI_API_KEY`` or ``STEWARD_LLM_BASE_URL``; speech-to-text and text-to-speech are added only
when their keys are set (text scenarios need neither).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["build_worker", "runner_bot", "serve"]


def build_worker(agent_dir: str | Path, transport: Any, env: Mapping[str, str]) -> Any:
    """The pipeline worker for ``agent_dir`` on ``transport``; nothing starts or connects.

    ``input → [STT] → user aggregator → LLM (steward attached) → [TTS] → output → assistant
    aggregator``; STT and TTS only when their keys are set. The worker adds RTVI, which the
    eval harness speaks.
    """
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair

    from pipecat_steward.cli.rehearse import _stt, _tts, llm_service  # pyright: ignore[reportPrivateUsage]
    from pipecat_steward.pipecat.steward import Steward

    speech = bool(env.get("DEEPGRAM_API_KEY") or env.get("OPENAI_API_KEY"))
    voice = bool(env.get("CARTESIA_API_KEY") or env.get("OPENAI_API_KEY"))
    llm = llm_service(env)
    steward = Steward.from_folder(agent_dir)
    steward.attach(llm)
    user, assistant = LLMContextAggregatorPair(LLMContext())
    stages = [transport.input(), *([_stt(env)] if speech else []), user, llm]
    stages += [*([_tts(env)] if voice else []), transport.output(), assistant]
    return PipelineWorker(
        Pipeline(stages), params=PipelineParams(enable_metrics=True), observers=steward.observers
    )


def runner_bot(agent_dir: str | Path) -> Callable[[Any], Awaitable[None]]:
    """The runner's ``bot(runner_args)`` entry point for ``agent_dir``."""
    folder = Path(agent_dir).resolve()

    async def bot(runner_args: Any) -> None:
        from pipecat.evals.transport import EvalTransportParams
        from pipecat.frames.frames import LLMRunFrame
        from pipecat.runner.utils import create_transport
        from pipecat.transports.base_transport import TransportParams
        from pipecat.workers.runner import WorkerRunner

        transport = await create_transport(
            runner_args,
            {
                "eval": lambda: EvalTransportParams(audio_in_enabled=True, audio_out_enabled=True),
                "webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True),
            },
        )
        worker = build_worker(folder, transport, os.environ)

        if getattr(runner_args, "transport_type", None) != "eval":
            # A live call opens with the bot (the engine decides the greeting); a scenario's
            # turns start with the caller, as in ``steward test``.
            @transport.event_handler("on_client_connected")
            async def _open(_transport: Any, _client: Any) -> None:
                await worker.queue_frames([LLMRunFrame()])

        runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
        await runner.add_workers(worker)
        await runner.run()

    return bot


def serve() -> None:
    """Serve pipecat's development runner with the calling script's ``bot``."""
    from pipecat.runner.run import main

    main()
