"""The files the ladder reads: the built-in table, stack manifests and the price book.

Each file is validated when loaded; a bad file raises :class:`ConfigError` naming the file,
the JSON path and the fix. Paths default to the repository's ``shared/service-definitions``
and ``stacks`` folders and can be passed explicitly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipecat_steward.core.costing import PriceBook
from pipecat_steward.exceptions import ConfigError
from pipecat_steward.slm.config import AuxEntry

__all__ = [
    "DEFINITIONS_DIR",
    "STACKS_DIR",
    "BuiltinTable",
    "OwnerProvider",
    "StackAux",
    "StackManifest",
    "list_stacks",
    "load_builtin_table",
    "load_price_book",
    "load_stack",
    "validation_error",
]

_ROOT = Path(__file__).resolve().parents[3]
DEFINITIONS_DIR = _ROOT / "shared" / "service-definitions"
"""Default folder of ``aux-services.json`` and ``prices.json``."""
STACKS_DIR = _ROOT / "stacks"
"""Default folder of the stack manifests."""

OwnerProvider = Literal["openai", "google", "vertex", "bedrock"]
"""The provider that owns a stack's primary LLM; keys the built-in table."""


class StackAux(BaseModel):
    """The aux services a stack manifest configures."""

    model_config = ConfigDict(frozen=True, extra="allow")

    logic_slm: AuxEntry


class StackManifest(BaseModel):
    """A stack manifest (``stacks/<name>.json``). Other sections are kept but not read here."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str = Field(min_length=1)
    owner_provider: OwnerProvider | None = None
    description: str = ""
    aux: StackAux


class BuiltinTable(BaseModel):
    """The built-in ``logic_slm`` table of ``aux-services.json``, keyed by owner provider."""

    model_config = ConfigDict(frozen=True, extra="allow")

    logic_slm: dict[OwnerProvider, AuxEntry]


def validation_error(source: str, err: ValidationError, fix: str) -> ConfigError:
    """Turn a pydantic error into a :class:`ConfigError` naming the first bad path."""
    first = err.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    return ConfigError(f"{source}:{loc}" if loc else source, f"{first['msg']}; {fix}")


def _read_json(path: Path) -> Any:
    """Read a JSON file, turning IO and syntax problems into :class:`ConfigError`."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(str(path), "file not found") from None
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(str(path), f"cannot read JSON: {err}") from None


def load_builtin_table(path: Path | None = None) -> BuiltinTable:
    """Load and validate the built-in table (``aux-services.json``)."""
    path = path or DEFINITIONS_DIR / "aux-services.json"
    try:
        return BuiltinTable.model_validate(_read_json(path))
    except ValidationError as err:
        fix = "see shared/service-definitions/logic-slm.schema.json"
        raise validation_error(str(path), err, fix) from None


def load_stack(name: str, stacks_dir: Path | None = None) -> StackManifest:
    """Load and validate the stack manifest ``<stacks_dir>/<name>.json``."""
    folder = stacks_dir or STACKS_DIR
    path = folder / f"{name}.json"
    if not path.is_file():
        known = ", ".join(list_stacks(folder)) or "none"
        raise ConfigError(f"stack {name!r}", f"no manifest {path}; known stacks: {known}")
    try:
        return StackManifest.model_validate(_read_json(path))
    except ValidationError as err:
        raise validation_error(str(path), err, "fix the manifest's aux.logic_slm entry") from None


def list_stacks(stacks_dir: Path | None = None) -> list[str]:
    """Return the names of the stack manifests in ``stacks_dir``."""
    folder = stacks_dir or STACKS_DIR
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def load_price_book(path: Path | None = None) -> PriceBook:
    """Load and validate the dated price book (``prices.json``)."""
    path = path or DEFINITIONS_DIR / "prices.json"
    data = _read_json(path)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if not k.startswith("$")}  # pyright: ignore[reportUnknownVariableType]
    try:
        return PriceBook.model_validate(data)
    except ValidationError as err:
        raise validation_error(str(path), err, "prices are decimal strings per 1M tokens") from None
