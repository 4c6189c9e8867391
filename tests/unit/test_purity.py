"""The core is pure: no IO library, clock or global randomness is loaded or called."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "lib" / "pipecat_steward" / "core"
FORBIDDEN_MODULES = (
    "pipecat",
    "openai",
    "httpx",
    "boto3",
    "botocore",
    "google",
    "websockets",
    "aiohttp",
    "redis",
    "sqlite3",
    "asyncio",
)
FORBIDDEN_IMPORTS = {
    "asyncio",
    "time",
    "random",
    "socket",
    "uuid",
    "secrets",
    "os",
    "subprocess",
    "threading",
    "sqlite3",
    "urllib",
    "http",
    "logging",
}
CLOCK_CALLS = {"now", "today", "utcnow", "monotonic", "perf_counter", "time_ns"}


def test_importing_core_loads_no_io_library() -> None:
    code = (
        "import sys, json\n"
        "import pipecat_steward.core, pipecat_steward.core.slots, pipecat_steward.core.expressions\n"
        "import pipecat_steward.core.variables, pipecat_steward.core.state\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    bad = [m for m in loaded if m.split(".")[0] in FORBIDDEN_MODULES]
    assert bad == []


def test_core_sources_import_no_clock_randomness_or_io() -> None:
    offenders: list[str] = []
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [(node.module or "").split(".")[0]]
            elif isinstance(node, ast.Attribute) and node.attr in CLOCK_CALLS:
                names = [f"<call .{node.attr}>"]
            else:
                continue
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n in FORBIDDEN_IMPORTS or n.startswith("<")]
    assert offenders == []


def test_the_check_itself_catches_an_offender(tmp_path: Path) -> None:
    bad = "import random\nimport datetime\nx = datetime.datetime.now()\n"
    tree = ast.parse(bad)
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Import) and n.names[0].name in FORBIDDEN_IMPORTS]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in CLOCK_CALLS]
    assert hits and calls
