"""This example bot for pipecat's development runner, and so for ``pipecat eval``.

    python bots/clinic/bot.py                      # serves ws://localhost:7860/ws (and /client)
    pipecat eval run --bot-url ws://localhost:7860/ws bots/clinic/scenarios

Needs an LLM: ``OPENAI_API_KEY``, or ``STEWARD_LLM_BASE_URL`` for an OpenAI-compatible server.
"""

from pathlib import Path

from pipecat_steward.pipecat.runner_bot import runner_bot, serve

bot = runner_bot(Path(__file__).parent)

if __name__ == "__main__":
    serve()
