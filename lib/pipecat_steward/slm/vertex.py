"""Vertex AI through ``google-genai`` with ``vertexai=True``.

Two ways to authenticate, chosen by the stage: ``project`` + ``location`` with Application
Default Credentials (the usual server setup), or Vertex express mode with an API key named by
``api_key_env``. The request and response shapes are Gemini's, so the call itself is
:class:`~pipecat_steward.slm.google.GoogleProvider`'s.
"""

from __future__ import annotations

import os

from google import genai
from google.genai import types

from pipecat_steward.exceptions import SLMResolutionError
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.google import GoogleProvider

__all__ = ["VertexProvider"]


class VertexProvider(GoogleProvider):
    """One Vertex AI endpoint (project/location, or express mode with an API key)."""

    def _make_client(self, stage: SLMStage, options: types.HttpOptions) -> genai.Client:
        """Build the SDK client in Vertex mode."""
        if stage.api_key_env:
            key = os.environ.get(stage.api_key_env)
            if not key:
                raise SLMResolutionError(
                    f"logic_slm (vertex): environment variable {stage.api_key_env} is not set"
                )
            return genai.Client(vertexai=True, api_key=key, http_options=options)
        return genai.Client(
            vertexai=True,
            project=stage.project,
            location=stage.location,
            http_options=options,
        )
