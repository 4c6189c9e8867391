"""Entity extraction: a small model proposes variable values from each caller turn. Pure.

Typical use by an adapter (``pipecat_steward.pipecat.extractor``)::

    if skip_reason(text, secure_capture=capturing) is None:
        specs = eligible(agent.variables, expects=current.expects if current else ())
        context = build_context(caller_utterances)
        schema = build_schema(specs)
        raw = <SLM call: schema, the extraction instruction + schema, extraction_prompt(...)>
        merged = merge_extraction(specs, agent.flow, state, raw, context)
"""

from pipecat_steward.core.extraction.context import (
    MAX_CHARS,
    MAX_PREVIOUS,
    SYNTHETIC_PREFIXES,
    ExtractionContext,
    SkipReason,
    build_context,
    skip_reason,
)
from pipecat_steward.core.extraction.merge import ExtractionMerge, Proposal, merge_extraction
from pipecat_steward.core.extraction.schema import build_schema, eligible, extraction_prompt
from pipecat_steward.core.extraction.stated import source_span

__all__ = [
    "MAX_CHARS",
    "MAX_PREVIOUS",
    "SYNTHETIC_PREFIXES",
    "ExtractionContext",
    "ExtractionMerge",
    "Proposal",
    "SkipReason",
    "build_context",
    "build_schema",
    "eligible",
    "extraction_prompt",
    "merge_extraction",
    "skip_reason",
    "source_span",
]
