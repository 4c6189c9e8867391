"""Deep configs: walks of the requires DAG are iterative, so a long chain validates, compiles
and runs (no ``RecursionError``), and a cycle at the end of a long chain is still named."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pipecat_steward.core.slots import check_flow, compile_flow, load_flow_config, step
from pipecat_steward.core.state import SessionState


def chain(length: int, *, loop: bool = False, reverse: bool = False) -> dict[str, Any]:
    slots: list[dict[str, Any]] = []
    for i in range(length):
        requires = [f"s{i - 1}"] if i else ([f"s{length - 1}"] if loop else [])
        slots.append(
            {"name": f"s{i}", "setter": f"set_s{i}", "ask": f"Value {i}?", "requires": requires}
        )
    return {"slots": slots[::-1] if reverse else slots}


@pytest.mark.parametrize("reverse", [False, True], ids=["leaf-first", "deep-end-first"])
@pytest.mark.parametrize("length", [1_000, 5_000])
def test_a_long_requires_chain_validates_and_compiles(length: int, reverse: bool) -> None:
    flow = load_flow_config(chain(length, reverse=reverse))
    assert check_flow(flow) == []
    compiled = compile_flow(flow)
    result = step(compiled, SessionState(), "", rng=random.Random(0), first_turn=True)
    assert result.action.asks == ("s0",)


def test_a_cycle_closing_a_long_chain_is_named() -> None:
    found = [str(e) for e in check_flow(load_flow_config(chain(1_000, loop=True)))]
    assert len(found) == 1 and found[0].startswith(
        "slots[0].requires: circular requires: s0 -> s999 -> s998"
    )
    assert found[0].endswith("s1 -> s0; break the loop")
