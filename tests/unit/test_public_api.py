"""Public API: every ``__all__`` is complete and importable (httpx-style)."""

from __future__ import annotations

from tests.pipecat_support import Recorder  # noqa: F401 - quiets pipecat's import warnings

# isort: split

import importlib

import pytest

PACKAGES = [
    "pipecat_steward.exceptions",
    "pipecat_steward.core.slots",
    "pipecat_steward.core.expressions",
    "pipecat_steward.core.procedures",
    "pipecat_steward.core.transactions",
    "pipecat_steward.storage.checkpoints",
    "pipecat_steward.slm",
    "pipecat_steward.pipecat.providers",
    "pipecat_steward.testing",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve(name: str) -> None:
    module = importlib.import_module(name)
    exported = module.__all__
    assert len(exported) == len(set(exported)), "no name twice"
    for symbol in exported:
        assert getattr(module, symbol) is not None, symbol


def test_testing_lazy_table_matches_all() -> None:
    testing = importlib.import_module("pipecat_steward.testing")
    assert sorted(testing._MODULE) == sorted(testing.__all__)
