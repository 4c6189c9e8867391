"""The procedure monitor's policy: a small model checks each bot turn against the checklist.

Pure: no clock, no IO; the adapter supplies time and the model call.

Typical use by an adapter (``pipecat_steward.pipecat.monitor``)::

    view = ProcedureView(procs, state, variables)
    ledger = add_utterance(ledger, "agent", text, at=now)
    decision = decide_assessment(view, "assistant_text", text=text, exchange=exchange,
                                 backed=backed)
    match decision:
        case Assess(reason, steps):
            request = build_request(view, ledger, steps, reason)
            raw = <SLM call: VERDICT_SCHEMA, system prompt, request.user>
            checked = check_verdict(raw, request, procs, variables)   # Checked | Discarded
            ladder, outcome = on_finding(ladder, checked.verdict.violation, view, now)
                                                                      # Observe | Deliver
        case Skip(): ...
    ladder, note = take_due(ladder, view, now)                        # at the caller's final
"""

from pipecat_steward.core.monitor.cache import VerdictCache
from pipecat_steward.core.monitor.evidence import (
    MAX_MESSAGES,
    MAX_OBSERVATIONS,
    MAX_UTTERANCES,
    EvidenceEntry,
    EvidenceKind,
    EvidenceLedger,
    add_application,
    add_tool_result,
    add_utterance,
    add_variable,
    compact_result,
)
from pipecat_steward.core.monitor.ladder import (
    NOTE_TTL_S,
    PREFIX,
    Correction,
    Deliver,
    LadderOutcome,
    LadderState,
    Observe,
    correction_text,
    grant,
    on_finding,
    still_valid,
    take_due,
)
from pipecat_steward.core.monitor.policy import (
    MAX_REQUIREMENTS,
    Assess,
    AssessReason,
    Decision,
    Exchange,
    Moment,
    Skip,
    claim_backed,
    claims_completion,
    decide_assessment,
    is_question,
    judge_requirements,
    monitored,
    out_of_order_tools,
    promises_action,
)
from pipecat_steward.core.monitor.request import (
    VERDICT_SCHEMA,
    VIOLATION_KINDS,
    AssessmentRequest,
    CacheKey,
    build_request,
    cache_key,
    state_hash,
)
from pipecat_steward.core.monitor.verdict import (
    Assessment,
    Checked,
    CheckResult,
    Discarded,
    RawVerdict,
    check_verdict,
    parse_verdict,
)
from pipecat_steward.core.monitor.watchdog import PROMISE_WAIT_S, Watchdog, played_out
from pipecat_steward.core.monitor.watchdog import arm as arm_watchdog
from pipecat_steward.core.monitor.watchdog import disarm as disarm_watchdog
from pipecat_steward.core.monitor.watchdog import fire as fire_watchdog

__all__ = [
    "MAX_MESSAGES",
    "MAX_OBSERVATIONS",
    "MAX_REQUIREMENTS",
    "MAX_UTTERANCES",
    "NOTE_TTL_S",
    "PREFIX",
    "PROMISE_WAIT_S",
    "VERDICT_SCHEMA",
    "VIOLATION_KINDS",
    "Assess",
    "AssessReason",
    "Assessment",
    "AssessmentRequest",
    "CacheKey",
    "CheckResult",
    "Checked",
    "Correction",
    "Decision",
    "Deliver",
    "Discarded",
    "EvidenceEntry",
    "EvidenceKind",
    "EvidenceLedger",
    "Exchange",
    "LadderOutcome",
    "LadderState",
    "Moment",
    "Observe",
    "RawVerdict",
    "Skip",
    "VerdictCache",
    "Watchdog",
    "add_application",
    "add_tool_result",
    "add_utterance",
    "add_variable",
    "arm_watchdog",
    "build_request",
    "cache_key",
    "check_verdict",
    "claim_backed",
    "claims_completion",
    "compact_result",
    "correction_text",
    "decide_assessment",
    "disarm_watchdog",
    "fire_watchdog",
    "grant",
    "is_question",
    "judge_requirements",
    "monitored",
    "on_finding",
    "out_of_order_tools",
    "parse_verdict",
    "played_out",
    "promises_action",
    "state_hash",
    "still_valid",
    "take_due",
]
