"""The studio: one page that shows a call as it happens, or replays one afterwards.

``steward studio AGENT`` serves it (FastAPI + uvicorn, plain HTML/CSS and one small script, no
build step): the transcript with each utterance's source, the slot board, the procedure
checklist, gate vetoes and monitor corrections as log entries, logic_slm calls with latency
and cost, and the agent's picture with the current step highlighted. Three ways in: replay a
stored session or a ``steward simulate --json`` trace, chat in text with the real pipeline
(``--text``), or talk over SmallWebRTC (``steward rehearse``).
"""

from pipecat_steward.studio.app import StudioConfig, create_app

__all__ = ["StudioConfig", "create_app"]
