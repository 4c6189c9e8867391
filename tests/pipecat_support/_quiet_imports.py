"""Import the pipecat modules that warn while being imported, ignoring just those warnings.

See the package docstring: the suite runs with warnings as errors, and these warnings are
pipecat's own, raised once at import time.
"""

import contextlib
import importlib
import warnings

_IMPORT_TIME_DEPRECATIONS = {
    "pipecat.audio.utils": "'audioop' is deprecated",
    "pipecat.services.tts_service": "`AudioContextTTSService` is deprecated",
    "pipecat.services.aws.nova_sonic.llm": "BedrockRuntimeClient is deprecated",
}

for _module, _message in _IMPORT_TIME_DEPRECATIONS.items():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_message, category=DeprecationWarning)
        # Nova Sonic needs aws_sdk_bedrock_runtime (Python >= 3.12); without it, skip it.
        with contextlib.suppress(ImportError):
            importlib.import_module(_module)
