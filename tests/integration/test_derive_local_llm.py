"""``steward derive`` against the real self-hosted tier: SmolLM2-135M on llama.cpp's server.

This exercises the real wire path (auto mode meets llama.cpp's refusal of ``json_schema`` and
falls back to a grammar-constrained ``json_object``). A 135M model is not expected to weave
well: the test pins what must hold whatever it answers — every answer is either accepted with
byte-identical prose and a valid agent, or refused with a reason, one retry, then an error;
never a salvaged append and never a write.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.derive_support.agents import make_agent
from tests.slm_support.local_llm import MODEL_ALIAS, SKIP_ENV, llama_server, missing_parts

from pipecat_steward.cli.derive import DeriveRefused, derive, derive_stage, report
from pipecat_steward.cli.validate import validate_agent
from pipecat_steward.core.procedures.blocks import strip_markers
from pipecat_steward.slm import SLMClient
from pipecat_steward.storage.ledger import MemoryLedger

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(
        os.environ.get(SKIP_ENV) == "1",
        reason=f"{SKIP_ENV}=1: local llama.cpp tier skipped (quick loops only; scripts/test runs it)",
    ),
    pytest.mark.skipif(
        bool(missing_parts()),
        reason="local llama.cpp tier absent in this environment: "
        + ", ".join(missing_parts())
        + " (scripts/setup installs it)",
    ),
]

SHORT = """\
You answer the phone for a bike shop.

Ask for the caller's name.

Book the repair with book_repair.
"""


@pytest.fixture(scope="module")
def llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as url:
        yield url


async def test_derive_over_the_real_wire(llama_url: str, tmp_path: Path) -> None:
    folder = make_agent(tmp_path / "bikes", SHORT)
    before = (folder / "agent.yaml").read_bytes()
    stage = derive_stage(folder, model=MODEL_ALIAS, base_url=llama_url)
    assert (stage.provider, stage.structured_mode) == ("openai_compatible", "auto")
    ledger = MemoryLedger()
    async with SLMClient(ledger=ledger) as client:
        try:
            derived = await derive(folder, stage, client=client, max_tokens=320, timeout=900)
        except DeriveRefused as refused:
            outcome: DeriveRefused | None = refused
            print(f"\nSmolLM2-135M: refused twice: {list(refused.refusals)}")
        else:
            outcome = None
            print(f"\nSmolLM2-135M: accepted\n{report(derived)}")
    rows = [r for r in ledger.events if r.scope == "derive"]
    print(f"calls: {[(r.outcome, r.input_tokens, r.output_tokens, r.latency_ms) for r in rows]}")
    assert rows and all(r.model == MODEL_ALIAS for r in rows)
    assert any(r.input_tokens > 0 for r in rows)  # the request really crossed the wire
    assert (folder / "agent.yaml").read_bytes() == before  # derive alone never writes
    if outcome is not None:
        assert len(rows) == 2 and len(outcome.refusals) == 2
        assert all(reason.strip() for reason in outcome.refusals)
        return
    assert len(rows) == len(derived.refusals) + 1 <= 2
    assert strip_markers(yaml.safe_load(derived.after)["prompt"]) == SHORT
    copy = make_agent(tmp_path / "written", SHORT)
    (copy / "agent.yaml").write_text(derived.after)
    assert not [i for i in validate_agent(copy) if i.severity == "error"]
