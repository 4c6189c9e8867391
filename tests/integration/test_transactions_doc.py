"""docs/transactions.md's idempotent-executor example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "transactions.md"


def test_the_idempotent_executor_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    example = next(b for b in blocks if "@idempotent" in b)
    namespace: dict[str, object] = {}
    exec(compile(example, str(DOC), "exec"), namespace)
    assert namespace["EFFECTS"] == ["PED-1001"]
    assert getattr(namespace["cancel_order"], "__steward_idempotent__", False) is True
