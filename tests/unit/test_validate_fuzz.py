"""Fuzz ``steward validate`` against the one loading path with mutants of the example bots.

Every mutant changes one thing in a shipped bot's ``agent.yaml`` (or hides one function of its
``tools.py``): a key dropped or added, a value of the wrong type, a name misspelt, an entry
duplicated, a hostile string. For each mutant:

- validate never raises (no traceback) and finishes within a time limit (no hang);
- when validate accepts it, loading accepts it too: ``load_agent``, the session the
  ``Steward`` entry point builds, and the bot's first scenario played by the direct driver;
- and nothing the code speaks in that scenario carries an unfilled ``{placeholder}``.
"""

from __future__ import annotations

import asyncio
import copy
import random
import re
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import yaml

from pipecat_steward.agent.loader import load_agent
from pipecat_steward.cli.validate import validate_agent
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.testing.direct import run_scenario_direct
from pipecat_steward.testing.scenario import load_scenario

BOTS = Path(__file__).parents[2] / "bots"
MUTANTS_PER_BOT = 140
TIME_LIMIT_S = 20
HOSTILE: list[object] = [
    42,
    -1,
    0,
    3.5,
    True,
    None,
    "",
    "x",
    [],
    {},
    [1, "a"],
    {"k": 1},
    "{__class__}",
    "{0}",
    "{value.__dict__}",
    "lambda v: v",
    "clock",
    "task:Nope",
    "a >",
    "x ==",
    "user",
    "event",
    "announce",
    "escalate",
    "not a tool",
    "🍕" * 3,
    "{" * 3,
]
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


class Hang(Exception):
    """A mutant ran past the time limit."""


@dataclass
class Tally:
    mutants: int = 0
    rejected: int = 0
    accepted: int = 0
    tracebacks: list[str] = field(default_factory=lambda: [])
    hangs: list[str] = field(default_factory=lambda: [])
    accepted_but_load_fails: list[str] = field(default_factory=lambda: [])
    spoke_placeholder: list[str] = field(default_factory=lambda: [])


def _slots(node: Any, path: str = "") -> Iterator[tuple[Any, Any, str]]:
    """Every (container, key, path) in a YAML tree."""
    items: list[tuple[int | str, Any]] = (
        list(enumerate(node)) if isinstance(node, list) else list(node.items())
    )
    for key, value in items:
        where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
        yield node, key, where
        if isinstance(value, dict | list):
            yield from _slots(value, where)


def _strings(data: Any) -> list[str]:
    return [c[k] for c, k, _ in _slots(data) if isinstance(c[k], str) and len(c[k]) < 40]


def _typo(text: str, rng: random.Random) -> str:
    if len(text) < 2:
        return text + "x"
    i = rng.randrange(len(text))
    return text[:i] + text[i + 1 :]


def mutate(data: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], str]:
    """One mutation of a copy of ``data`` and what it was."""
    out = copy.deepcopy(data)
    container, key, where = rng.choice(list(_slots(out)))
    value = container[key]
    kind = rng.choice(["drop", "hostile", "typo", "swap", "duplicate", "extra_key"])
    if kind == "drop":
        del container[key]
    elif kind == "hostile":
        container[key] = copy.deepcopy(rng.choice(HOSTILE))
    elif kind == "typo" and isinstance(value, str):
        container[key] = _typo(value, rng)
    elif kind == "swap":
        container[key] = rng.choice(_strings(data))
    elif kind == "duplicate" and isinstance(value, list) and value:
        value.append(copy.deepcopy(rng.choice(value)))
    elif isinstance(value, dict):
        value[rng.choice(["extra", "tool", "name", "then", "kind", 1, None, True])] = "x"
    else:
        container[key] = copy.deepcopy(rng.choice(HOSTILE))
        kind = "hostile"
    return out, f"{kind} at {where}"


def _hide_tool(folder: Path, rng: random.Random) -> str:
    source = (folder / "tools.py").read_text()
    names = [ln[4:].split("(")[0] for ln in source.splitlines() if ln.startswith("def ")]
    public = [n for n in names if not n.startswith("_")]
    name = rng.choice(public)
    (folder / "tools.py").write_text(source.replace(f"def {name}(", f"def _{name}("))
    return f"tools.py without {name}"


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def _play(folder: Path, scenario: Path) -> list[str]:
    """Load as the ``Steward`` entry point does, play, and return what the code spoke."""
    agent = load_agent(folder)
    traces = asyncio.run(run_scenario_direct(agent, load_scenario(scenario)))
    return [b["text"] for t in traces for b in t["bot"] if b.get("source") != "llm"]


def _one(folder: Path, scenario: Path, what: str, tally: Tally) -> None:
    tally.mutants += 1
    signal.alarm(TIME_LIMIT_S)
    try:
        errors = [i for i in validate_agent(folder) if i.severity == "error"]
    except ConfigError:
        errors = ["unreadable"]
    except Hang:
        tally.hangs.append(what)
        return
    except Exception as exc:
        tally.tracebacks.append(f"{what}: {type(exc).__name__}: {exc}")
        return
    finally:
        signal.alarm(0)
    if errors:
        tally.rejected += 1
        return
    tally.accepted += 1
    signal.alarm(TIME_LIMIT_S)
    try:
        spoken = _play(folder, scenario)
        tally.spoke_placeholder += [f"{what}: {t}" for t in spoken if PLACEHOLDER.search(t)]
    except Hang:
        tally.hangs.append(f"{what} (playing)")
    except Exception as exc:
        tally.accepted_but_load_fails.append(f"{what}: {type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)


def fuzz(tmp: Path, seed: int = 13, per_bot: int = MUTANTS_PER_BOT) -> Tally:
    """Run ``per_bot`` mutants of every example bot and count the outcomes."""
    tally = Tally()
    rng = random.Random(seed)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for bot in sorted(p for p in BOTS.iterdir() if (p / "agent.yaml").is_file()):
            data = yaml.safe_load((bot / "agent.yaml").read_text())
            scenario = sorted((bot / "scenarios").glob("*.yaml"))[0]
            for n in range(per_bot):
                folder = tmp / f"{bot.name}_{n}"
                shutil.copytree(bot, folder, ignore=shutil.ignore_patterns("scenarios", "__*"))
                if rng.random() < 0.1:
                    what = _hide_tool(folder, rng)
                else:
                    mutant, what = mutate(data, rng)
                    (folder / "agent.yaml").write_text(yaml.safe_dump(mutant, sort_keys=False))
                _one(folder, scenario, f"{bot.name}: {what}", tally)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return tally


def test_validate_accepts_nothing_that_loading_rejects(tmp_path: Path) -> None:
    tally = fuzz(tmp_path)
    print(
        f"\nvalidate fuzz: {tally.mutants} mutants, {tally.rejected} rejected, "
        f"{tally.accepted} accepted; {len(tally.tracebacks)} tracebacks, "
        f"{len(tally.hangs)} hangs, {len(tally.accepted_but_load_fails)} accepted but "
        f"rejected by loading, {len(tally.spoke_placeholder)} spoke a raw placeholder"
    )
    assert tally.mutants >= 500
    assert tally.tracebacks == []
    assert tally.hangs == []
    assert tally.accepted_but_load_fails == []
    assert tally.spoke_placeholder == []
    assert tally.rejected >= tally.mutants // 3  # the mutants are real mistakes, mostly
