"""``steward derive AGENT_DIR [--prompt FILE] [--write]``: a checklist woven into your prompt.

A model reads the agent's prompt (``agent.yaml``'s ``prompt``, or ``--prompt FILE``) with its
tools and variables and returns the same prompt with ``{{#step id}} … {{/step}}`` (and
``{{#procedure name}}``) marker lines inserted, plus optional settings for the steps it added.
The answer replaces the prompt only when stripping the markers from both sides gives the same
bytes (:func:`~pipecat_steward.core.procedures.weave.check_weave`), the author's blocks are
intact and the edited agent passes ``steward validate`` with no new error. A refused answer
gets one retry with the reason fed back; a second refusal is an error. Nothing is ever
appended in place of a weave.

Without ``--write`` it prints the unified diff of ``agent.yaml`` and the checklist it would
produce. With ``--write`` the woven prompt and the new sidecar entries land in one write of
``agent.yaml``, refused if the file (or the prompt file) changed since it was read.

The model is the agent's logic_slm stage (its ``derive`` scope model when set); ``--model``
replaces the model; ``--base-url`` or ``STEWARD_LLM_BASE_URL`` points at any OpenAI-compatible
endpoint instead. Exits 0 on success, 1 when the derivation or the write is refused, 2 when the
folder, the model or the endpoint cannot be used.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from pipecat_steward.cli._derive_agent import AgentFolder, Read, validation_errors
from pipecat_steward.cli._slm_agent import agent_stage
from pipecat_steward.cli.arguments import seconds, whole_number
from pipecat_steward.core.procedures import MAIN, ScopeSource, compile_procedures
from pipecat_steward.core.procedures.derive import (
    DERIVE_SCHEMA,
    DerivedProposal,
    DiscardedSetting,
    merge_sidecar,
    parse_proposal,
    sidecar_entries,
)
from pipecat_steward.core.procedures.steps import ProcedureStep
from pipecat_steward.core.procedures.weave import Rename, WeaveAccepted, WeaveRefused, check_weave
from pipecat_steward.exceptions import ConfigError, SLMError, SLMOutputError
from pipecat_steward.slm.client import SLMClient
from pipecat_steward.slm.config import SLMStage
from pipecat_steward.slm.manifests import load_builtin_table
from pipecat_steward.slm.prompts import DEFAULT_PROMPTS, compose_system
from pipecat_steward.slm.resolution import resolve_stage

__all__ = [
    "BASE_URL_ENV",
    "MAX_ATTEMPTS",
    "DeriveRefused",
    "Derived",
    "add_parser",
    "derive",
    "derive_stage",
    "run",
    "write_derived",
]

BASE_URL_ENV = "STEWARD_LLM_BASE_URL"
MAX_ATTEMPTS = 2  # the answer, then one retry with the refusal's reason
_MIN_OUTPUT_TOKENS = 4096


class DeriveRefused(Exception):
    """The derivation or its write was refused; ``refusals`` are the reasons, in order."""

    def __init__(self, message: str, refusals: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.refusals = tuple(refusals)


@dataclass(frozen=True)
class Derived:
    """An accepted derivation: the new ``agent.yaml`` text and what went into it."""

    path: Path
    before: str
    after: str
    prompt: str
    entries: tuple[dict[str, Any], ...]
    new_steps: tuple[str, ...]
    discarded: tuple[DiscardedSetting, ...]
    renamed: tuple[Rename, ...]
    refusals: tuple[str, ...]
    checklist: str
    sources: tuple[Read, ...]
    calls: int
    tokens: tuple[int, int]

    @property
    def diff(self) -> str:
        """The unified diff of ``agent.yaml``."""
        name = str(self.path)
        lines = difflib.unified_diff(
            self.before.splitlines(True), self.after.splitlines(True), name, name
        )
        return "".join(lines)


def add_parser(sub: Any) -> None:
    """Register ``steward derive``."""
    parser = sub.add_parser("derive", help="weave a procedure checklist into an agent's prompt")
    parser.add_argument("agent_dir", type=Path, metavar="AGENT_DIR", help="agent folder")
    parser.add_argument("--prompt", type=Path, metavar="FILE", help="derive from this prompt")
    parser.add_argument("--write", action="store_true", help="write agent.yaml (default: diff)")
    parser.add_argument("--model", help="model name (replaces the resolved model)")
    parser.add_argument("--base-url", help=f"OpenAI-compatible endpoint (or ${BASE_URL_ENV})")
    parser.add_argument("--stack", help="stack manifest name (overrides agent.yaml aux.stack)")
    parser.add_argument(
        "--max-tokens", type=whole_number(1), help="output token budget of each call"
    )
    parser.add_argument("--timeout", type=seconds(), default=180.0, help="seconds per model call")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Derive, print the diff and checklist, and write when asked."""
    try:
        stage = derive_stage(
            args.agent_dir, stack=args.stack, model=args.model, base_url=args.base_url
        )
        derived = asyncio.run(
            derive(
                args.agent_dir,
                stage,
                prompt_file=args.prompt,
                max_tokens=args.max_tokens,
                timeout=args.timeout,
            )
        )
        print(report(derived))
        if args.write:
            write_derived(derived)
            print(f"wrote {derived.path}")
        else:
            print("dry run: nothing written (add --write to apply)")
    except DeriveRefused as err:
        for number, reason in enumerate(err.refusals, start=1):
            print(f"attempt {number} refused: {reason}", file=sys.stderr)
        print(f"steward derive: {err}", file=sys.stderr)
        return 1
    except (ConfigError, SLMError, OSError, UnicodeDecodeError) as err:
        print(f"steward derive: {err}", file=sys.stderr)
        return 2
    return 0


def derive_stage(
    agent_dir: Path,
    *,
    stack: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
) -> SLMStage:
    """The stage derive calls: an explicit endpoint, else the agent's logic_slm stage."""
    url = base_url or os.environ.get(BASE_URL_ENV)
    if url:
        if not model:
            raise ConfigError("--model", f"name the model served at {url} (e.g. --model my-model)")
        overlay = {
            "provider": "openai_compatible",
            "config": {"base_url": url, "model": model, "structured_mode": "auto"},
        }
        return resolve_stage(table=load_builtin_table(), overlay=overlay)
    stage, _ = agent_stage(agent_dir, stack)
    if model:
        scopes = {k: v for k, v in stage.scope_models.items() if k != "derive"}
        stage = stage.model_copy(update={"model": model, "scope_models": scopes})
    return stage


async def derive(
    agent_dir: Path,
    stage: SLMStage,
    *,
    prompt_file: Path | None = None,
    client: SLMClient | None = None,
    max_tokens: int | None = None,
    timeout: float = 180.0,
) -> Derived:
    """Ask the model for a weave and return the accepted result, or raise :class:`DeriveRefused`.

    Raises:
        DeriveRefused: Two answers in a row were refused (the reasons are attached).
        ConfigError: The folder or the prompt cannot be read.
        SLMError: The endpoint cannot be reached or did not answer in time.
    """
    agent = AgentFolder.read(agent_dir, prompt_file)
    budget = max_tokens or max(_MIN_OUTPUT_TOKENS, len(agent.prompt) // 2)
    stage = stage.model_copy(update={"max_output_tokens": budget, "timeout_s": timeout})
    system = compose_system(stage.prompts.get("derive", DEFAULT_PROMPTS["derive"]), DERIVE_SCHEMA)
    baseline = validation_errors(agent, agent.render(agent.prompt, ()))
    owned = client is None
    active = client or SLMClient()
    refusals: list[str] = []
    tokens = [0, 0]
    try:
        for _ in range(MAX_ATTEMPTS):
            outcome = await _attempt(active, stage, system, agent, baseline, refusals, tokens)
            if isinstance(outcome, Derived):
                return outcome
            refusals.append(outcome)
    finally:
        if owned:
            await active.aclose()
    raise DeriveRefused(
        f"the model's answer was refused {MAX_ATTEMPTS} times; the prompt was left as it is",
        refusals,
    )


async def _attempt(
    client: SLMClient,
    stage: SLMStage,
    system: str,
    agent: AgentFolder,
    baseline: set[str],
    refusals: Sequence[str],
    tokens: list[int],
) -> Derived | str:
    """One call (fed the last refusal) and every check on its answer; a string is a refusal."""
    user = agent.request(refusals[-1] if refusals else None)
    try:
        result = await client.complete(stage, DERIVE_SCHEMA, system, user, scope="derive")
    except SLMOutputError as err:
        return f"the answer was not a JSON object of the requested shape ({err})"
    tokens[0] += result.usage.input_tokens
    tokens[1] += result.usage.output_tokens
    proposal = parse_proposal(result.value)
    woven = check_weave(agent.prompt, proposal.prompt)
    if isinstance(woven, WeaveRefused):
        return woven.reason
    return _accept(agent, woven, proposal, baseline, refusals, tokens)


def _accept(
    agent: AgentFolder,
    woven: WeaveAccepted,
    proposal: DerivedProposal,
    baseline: set[str],
    refusals: Sequence[str],
    tokens: Sequence[int],
) -> Derived | str:
    """The accepted derivation, or why the woven agent is refused (it fails validation)."""
    existing = {*agent.existing_ids, *(r.proposed for r in woven.renamed)}
    entries, discarded = sidecar_entries(
        proposal.settings, new_steps=woven.new_steps, existing=existing
    )
    try:
        text = agent.render(woven.prompt, entries)
    except ConfigError as err:
        return f"the result could not be written back ({err.problem})"
    new_errors = sorted(validation_errors(agent, text) - baseline)
    if new_errors:
        named = [_name_steps(e, agent.procedure, entries) for e in new_errors[:3]]
        return "the woven agent fails steward validate: " + "; ".join(named)
    return Derived(
        path=agent.path,
        before=agent.text,
        after=text,
        prompt=woven.prompt,
        entries=entries,
        new_steps=woven.new_steps,
        discarded=discarded,
        renamed=woven.renamed,
        refusals=tuple(refusals),
        checklist=checklist(text, woven.new_steps),
        sources=agent.sources,
        calls=len(refusals) + 1,
        tokens=(tokens[0], tokens[1]),
    )


def _name_steps(
    error: str, procedure: Mapping[str, Any] | None, entries: Sequence[Mapping[str, Any]]
) -> str:
    """Name the step behind each ``procedure.steps[i]`` path, for the model's retry."""
    steps = cast(list[Any], (merge_sidecar(procedure, entries) or {}).get("steps") or [])
    for i, entry in reversed(list(enumerate(steps))):
        if isinstance(entry, dict) and f"procedure.steps[{i}]" in error:
            label = f"procedure.steps[{i}] (step {cast(dict[str, Any], entry).get('id')!r})"
            error = error.replace(f"procedure.steps[{i}]", label)
    return error


def write_derived(derived: Derived) -> None:
    """Write the new ``agent.yaml`` in one replace, unless a source changed since it was read.

    Raises:
        DeriveRefused: ``agent.yaml`` or the prompt file is not what derive read.
    """
    for source in derived.sources:
        now = source.path.read_bytes() if source.path.exists() else b""
        if now != source.data:
            raise DeriveRefused(
                f"{source.path} changed since derive read it; nothing written "
                "(run steward derive again on the current file)"
            )
    temp = derived.path.with_name(f".{derived.path.name}.derive.tmp")
    temp.write_text(derived.after, encoding="utf-8")
    os.replace(temp, derived.path)


def report(derived: Derived) -> str:
    """What a run prints: refusals, reconciled names, dropped settings, the diff, the checklist."""
    rows = [f"attempt {i} refused: {r}" for i, r in enumerate(derived.refusals, start=1)]
    rows += [
        f"kept the author's {r.kind} name {r.original!r} (the model called it {r.proposed!r})"
        for r in derived.renamed
    ]
    rows += [f"dropped the proposed settings of {d.step!r}: {d.reason}" for d in derived.discarded]
    added = ", ".join(derived.new_steps) or "none"
    rows.append(
        f"{derived.calls} model call(s), {derived.tokens[0]} input / {derived.tokens[1]} output "
        f"tokens; steps added: {added}"
    )
    rows.append(derived.diff.rstrip("\n") or f"{derived.path}: no change")
    rows.append(derived.checklist)
    return "\n".join(rows)


def checklist(agent_text: str, new_steps: Sequence[str]) -> str:
    """The main scope's checklists as the compiled agent would run them."""
    data = cast(dict[str, Any], yaml.safe_load(agent_text) or {})
    procs = compile_procedures(
        [ScopeSource(MAIN, str(data.get("prompt") or ""), data.get("procedure"))]
    )
    rows = ["checklist it produces:"]
    for key, checklist_ in procs.checklists.items():
        if checklist_.scope != MAIN:
            continue
        rows.append(f"  {checklist_.title} ({key})")
        for n, step_id in enumerate(checklist_.steps, start=1):
            step = procs.steps[step_id]
            mark = "+" if step_id in new_steps else " "
            rows.append(f"  {mark}{n:>2}. {step.id}: {step.title} — {_completion(step)}")
    return "\n".join(rows) if len(rows) > 1 else "checklist it produces: (no steps)"


def _completion(step: ProcedureStep) -> str:
    """Say how a step completes and what guards it."""
    if step.kind == "tool":
        how = f"when {step.tool or 'a tool'} succeeds" + (
            f" rendering {step.component}" if step.component else ""
        )
    elif step.kind == "variable":
        how = f"when {step.expr.source if step.expr else '?'}"
    else:
        how = "when the judge agrees"
    extras = [how + (" (inferred)" if step.inferred else "")]
    if step.irreversible:
        extras.append(f"irreversible, gated ({step.fail_mode.value})")
    extras += [f"only if {e.source}" for e in step.applies]
    if step.applies_llm:
        extras.append(f"only if (judged) {step.applies_llm}")
    return "; ".join(extras)
