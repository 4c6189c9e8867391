"""``steward derive`` against a scripted model on 127.0.0.1 (the real openai SDK wire path)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml
from tests.derive_support.agents import (
    GOOD,
    PROSE,
    WOVEN,
    answer,
    make_agent,
    refusal_fed_back,
    step,
)

from pipecat_steward.cli._agent_yaml import replace_sections
from pipecat_steward.cli.derive import DeriveRefused, derive, derive_stage, write_derived
from pipecat_steward.cli.main import main
from pipecat_steward.cli.validate import validate_agent
from pipecat_steward.core.procedures import scan
from pipecat_steward.core.procedures.blocks import strip_markers
from pipecat_steward.testing.scripted_slm import ScriptedSLM, SLMRequest

DRIFTED = answer(WOVEN.replace("try once more", "retry"), *GOOD["steps"])


def _errors(folder: Path) -> list[str]:
    return [str(i) for i in validate_agent(folder) if i.severity == "error"]


async def test_clean_weave_dry_run_then_one_write(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    before = (folder / "agent.yaml").read_text()
    async with ScriptedSLM([GOOD]) as slm:
        derived = await derive(folder, slm.stage())
    assert (folder / "agent.yaml").read_text() == before  # a dry run writes nothing
    assert derived.refusals == () and derived.calls == 1
    assert derived.new_steps == ("identify", "ask_payment", "take_payment")
    assert "+  {{#step identify}}" in derived.diff
    assert "take_payment: Take the payment — when charge_card succeeds; irreversible" in (
        derived.checklist
    )
    (request,) = slm.requests
    assert PROSE in request.user and "find_patient, charge_card" in request.user
    assert request.schema is not None and set(request.schema["properties"]) == {"prompt", "steps"}
    write_derived(derived)
    after = (folder / "agent.yaml").read_text()
    data = yaml.safe_load(after)
    assert strip_markers(data["prompt"]) == PROSE
    assert after.startswith("# Harbor Dental: the author's own comment stays.\n")
    assert [e["id"] for e in data["procedure"]["steps"]] == [
        "identify",
        "ask_payment",
        "take_payment",
    ]
    assert data["procedure"]["steps"][2]["irreversible"] is True
    assert _errors(folder) == []


async def test_prose_drift_is_refused_then_fixed_on_the_retry(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    async with ScriptedSLM([DRIFTED, GOOD]) as slm:
        derived = await derive(folder, slm.stage())
    (reason,) = derived.refusals
    assert "line 4" in reason and "try once more" in reason
    first, second = slm.requests
    assert not refusal_fed_back(first)
    assert refusal_fed_back(second) and reason in second.user
    assert strip_markers(derived.prompt) == PROSE


async def test_drift_twice_is_an_error_and_nothing_is_appended(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    before = (folder / "agent.yaml").read_bytes()
    appended = answer(PROSE + "{{#step extra}}\nConfirm the payment.\n{{/step}}\n")
    async with ScriptedSLM([DRIFTED, appended, GOOD]) as slm:
        with pytest.raises(DeriveRefused) as caught:
            await derive(folder, slm.stage())
    assert len(slm.requests) == 2  # one retry, never a third call
    first, second = caught.value.refusals
    assert "line 4" in first and "added after" in second
    assert (folder / "agent.yaml").read_bytes() == before


AUTHORED = (
    PROSE.replace(
        "Tell the caller the amount due",
        "{{#procedure billing}}\n{{#step quote}}\nTell the caller the amount due",
    ).replace("want to pay now.\n", "want to pay now.\n{{/step}}\n")
    + "{{/procedure}}\n"
)
AUTHORED_SIDECAR = """
procedure:
  steps:
    - id: quote
      title: Quote the amount  # the author's words
"""


def _authored_weave(group: str) -> str:
    return (
        AUTHORED.replace("{{#procedure billing}}", f"{{{{#procedure {group}}}}}")
        .replace("Ask for the caller's", "{{#step identify}}\nAsk for the caller's")
        .replace("try once more.\n", "try once more.\n{{/step}}\n")
        .replace("Only after", "{{#step take_payment}}\nOnly after")
        .replace("charge_card.\n", "charge_card.\n{{/step}}\n")
    )


async def test_existing_blocks_and_their_settings_are_kept(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor", AUTHORED, AUTHORED_SIDECAR)
    proposal = answer(
        _authored_weave("billing"),
        step("quote", title="Model's title", judge="The amount was said."),
        step("identify", tool="find_patient"),
        step("take_payment", tool="charge_card", irreversible=True),
    )
    async with ScriptedSLM([proposal]) as slm:
        derived = await derive(folder, slm.stage())
    assert "Blocks the author already wrote" in slm.requests[0].user
    assert [d.step for d in derived.discarded] == ["quote"]
    write_derived(derived)
    data = yaml.safe_load((folder / "agent.yaml").read_text())
    assert data["procedure"]["steps"][0] == {"id": "quote", "title": "Quote the amount"}
    assert "# the author's words" in (folder / "agent.yaml").read_text()
    steps = {s.id: s for s in scan(data["prompt"]).steps}
    assert steps["quote"].group == "billing" and steps["take_payment"].group == "billing"
    assert steps["quote"].nodes == {s.id: s for s in scan(AUTHORED).steps}["quote"].nodes
    assert _errors(folder) == []


async def test_a_renamed_author_group_is_reconciled(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor", AUTHORED, AUTHORED_SIDECAR)
    proposal = answer(_authored_weave("payments_flow"), step("identify", tool="find_patient"))
    async with ScriptedSLM([proposal]) as slm:
        derived = await derive(folder, slm.stage())
    assert [(r.proposed, r.original) for r in derived.renamed] == [("payments_flow", "billing")]
    assert "{{#procedure billing}}" in derived.prompt and "payments_flow" not in derived.prompt
    assert derived.refusals == ()


async def test_a_concurrent_edit_refuses_the_write(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    path = folder / "agent.yaml"

    def author_types_meanwhile(request: SLMRequest) -> dict:
        path.write_text(path.read_text() + "# typed while derive ran\n")
        return GOOD

    async with ScriptedSLM(answer=author_types_meanwhile) as slm:
        derived = await derive(folder, slm.stage())
    edited = path.read_text()
    with pytest.raises(DeriveRefused, match="changed since derive read it"):
        write_derived(derived)
    assert path.read_text() == edited


async def test_an_edit_to_the_prompt_file_also_refuses_the_write(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor", "placeholder\n")
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(PROSE)

    def edit(request: SLMRequest) -> dict:
        prompt_file.write_text(PROSE + "New line.\n")
        return GOOD

    async with ScriptedSLM(answer=edit) as slm:
        derived = await derive(folder, slm.stage(), prompt_file=prompt_file)
    with pytest.raises(DeriveRefused, match="prompt.txt changed"):
        write_derived(derived)


async def test_a_proposal_that_fails_validation_is_refused_and_retried(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    bad = answer(WOVEN, step("ask_payment", judge="The caller agreed.", irreversible=True))
    async with ScriptedSLM([bad, GOOD]) as slm:
        derived = await derive(folder, slm.stage())
    (reason,) = derived.refusals
    assert "fails steward validate" in reason and "ask_payment" in reason
    assert _errors(folder) == []


async def test_garbage_output_counts_as_a_refused_attempt(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    async with ScriptedSLM(["I'd be happy to help!", GOOD]) as slm:
        derived = await derive(folder, slm.stage())
    (reason,) = derived.refusals
    assert "not a JSON object" in reason


async def test_sidecar_settings_for_unknown_or_invalid_steps_are_dropped(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor")
    proposal = answer(
        WOVEN,
        step("ghost", tool="find_patient"),
        step("identify", expr="pay_now ==="),
        step("take_payment", tool="charge_card", irreversible=True),
    )
    async with ScriptedSLM([proposal]) as slm:
        derived = await derive(folder, slm.stage())
    assert {d.step: d.reason.split(" ")[0] for d in derived.discarded} == {
        "ghost": "names",
        "identify": "invalid",
    }
    assert [e["id"] for e in derived.entries] == ["take_payment"]


async def test_prompt_file_lands_in_agent_yaml_in_one_write(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor", "placeholder\n")
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text(PROSE)
    async with ScriptedSLM([GOOD]) as slm:
        derived = await derive(folder, slm.stage(), prompt_file=prompt_file)
    write_derived(derived)
    assert yaml.safe_load((folder / "agent.yaml").read_text())["prompt"] == WOVEN
    assert prompt_file.read_text() == PROSE


async def test_the_command_prints_the_diff_and_checklist_then_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_agent(tmp_path / "harbor")
    async with ScriptedSLM(answer=lambda _: GOOD, model="derive-model") as slm:
        monkeypatch.setenv("STEWARD_LLM_BASE_URL", slm.base_url)
        dry = await asyncio.to_thread(main, ["derive", str(folder), "--model", "derive-model"])
        out = capsys.readouterr().out
        assert dry == 0 and "dry run: nothing written" in out
        assert "+  {{/procedure}}" in out and "checklist it produces:" in out
        assert yaml.safe_load((folder / "agent.yaml").read_text())["prompt"] == PROSE
        wrote = await asyncio.to_thread(
            main, ["derive", str(folder), "--model", "derive-model", "--write"]
        )
    assert wrote == 0 and "wrote" in capsys.readouterr().out
    assert yaml.safe_load((folder / "agent.yaml").read_text())["prompt"] == WOVEN
    assert {r.model for r in slm.requests} == {"derive-model"}


async def test_the_command_exits_1_with_both_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_agent(tmp_path / "harbor")
    async with ScriptedSLM(answer=lambda _: DRIFTED) as slm:
        monkeypatch.setenv("STEWARD_LLM_BASE_URL", slm.base_url)
        code = await asyncio.to_thread(main, ["derive", str(folder), "--model", "m", "--write"])
    err = capsys.readouterr().err
    assert code == 1
    assert "attempt 1 refused" in err and "attempt 2 refused" in err
    assert "left as it is" in err


async def test_the_agents_derive_scope_model_and_prompt_override_are_used(tmp_path: Path) -> None:
    async with ScriptedSLM([GOOD]) as slm:
        aux = (
            "aux:\n  logic_slm:\n    provider: openai_compatible\n    config:\n"
            f"      base_url: {slm.base_url}\n      model: small-runtime-model\n"
            "      scope_models: {derive: big-authoring-model}\n"
            "      prompt_overrides: {derive: Weave markers only.}\n"
        )
        folder = make_agent(tmp_path / "harbor", extra=aux)
        derived = await derive(folder, derive_stage(folder))
    (request,) = slm.requests
    assert request.model == "big-authoring-model"
    assert request.system.startswith("Weave markers only.\n\nReply with exactly one JSON object")
    assert derived.new_steps == ("identify", "ask_payment", "take_payment")


def test_an_endpoint_without_a_model_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_agent(tmp_path / "harbor")
    monkeypatch.setenv("STEWARD_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert main(["derive", str(folder)]) == 2
    assert "--model" in capsys.readouterr().err


CLINIC = Path(__file__).resolve().parents[2] / "bots" / "clinic"


def _flat(entry: dict) -> dict:
    """A clinic sidecar entry as the derive schema's flat row (what a model can propose)."""
    done, applies = entry.get("complete_when") or {}, entry.get("applies_when") or {}
    return step(
        entry["id"],
        title=entry.get("title"),
        tool=done.get("tool"),
        expr=done.get("expr"),
        judge=done.get("prompt"),
        irreversible=entry.get("irreversible"),
        applies_code=applies.get("expr"),
    )


async def test_clinic_before_and_after(tmp_path: Path) -> None:
    """The docs' example: the clinic prompt without markers becomes bots/clinic's checklist."""
    text = (CLINIC / "agent.yaml").read_text()
    data = yaml.safe_load(text)
    folder = tmp_path / "clinic"
    shutil.copytree(CLINIC, folder, ignore=shutil.ignore_patterns("__pycache__"))
    head, rest = text.split("\nprocedure:\n", 1)
    without_procedure = head + "\n" + rest[rest.index("\nvariables:") + 1 :]
    before = replace_sections(without_procedure, {"prompt": strip_markers(data["prompt"])})
    (folder / "agent.yaml").write_text(before)
    proposal = answer(data["prompt"], *(_flat(e) for e in data["procedure"]["steps"]))
    async with ScriptedSLM([proposal]) as slm:
        derived = await derive(folder, slm.stage())
    write_derived(derived)
    after = yaml.safe_load((folder / "agent.yaml").read_text())
    assert after["prompt"] == data["prompt"]
    assert [s["id"] for s in after["procedure"]["steps"]] == [
        s["id"] for s in data["procedure"]["steps"]
    ]
    assert derived.discarded == ()
    assert "take_payment: Take the copay — when collect_payment succeeds; irreversible" in (
        derived.checklist
    )
    assert "review_copay: Billing review of a large copay — when request_copay_review" in (
        derived.checklist
    )
    assert _errors(folder) == []


CONFIG_ONLY = """
procedure:
  steps:
    - id: identify
      title: Identify the caller (the author's title)
      complete_when: {kind: tool, tool: find_patient}
    - id: take_payment
      title: Take the payment
      irreversible: true
      complete_when: {kind: tool, tool: charge_card}
"""


async def test_a_config_only_procedure_gets_blocks_under_its_own_ids(tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "harbor", extra=CONFIG_ONLY)
    proposal = answer(
        WOVEN, step("identify", title="Model's"), step("ask_payment", expr="pay_now == true")
    )
    async with ScriptedSLM([proposal]) as slm:
        derived = await derive(folder, slm.stage())
    assert "configured without a block" in slm.requests[0].user
    assert "identify, take_payment" in slm.requests[0].user
    assert [d.step for d in derived.discarded] == ["identify"]
    write_derived(derived)
    steps = yaml.safe_load((folder / "agent.yaml").read_text())["procedure"]["steps"]
    assert [s["id"] for s in steps] == ["identify", "take_payment", "ask_payment"]
    assert steps[0]["title"] == "Identify the caller (the author's title)"
    assert _errors(folder) == []
