"""Each public class name in the package names one class, so an import says what it brings."""

from __future__ import annotations

from tests.pipecat_support import _quiet_imports  # noqa: F401  (must precede pipecat imports)

# isort: split

import importlib
import inspect
import pkgutil
from collections import defaultdict
from types import ModuleType

import pipecat_steward


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(pipecat_steward.__path__, "pipecat_steward.")]
    return [pipecat_steward, *(importlib.import_module(n) for n in names)]


def _public_classes(module: ModuleType) -> dict[str, type]:
    """The classes a module offers: its ``__all__``, else its own public top-level classes."""
    declared = getattr(module, "__all__", None)
    if declared is not None:
        objects = {n: getattr(module, n, None) for n in declared}
    else:
        objects = {
            n: o
            for n, o in vars(module).items()
            if getattr(o, "__module__", None) == module.__name__
        }
    return {n: o for n, o in objects.items() if inspect.isclass(o) and not n.startswith("_")}


def _class_owners() -> dict[str, set[str]]:
    owners: defaultdict[str, set[str]] = defaultdict(set)
    for module in _modules():
        for name, cls in _public_classes(module).items():
            owners[name].add(f"{cls.__module__}.{cls.__qualname__}")
    return owners


def test_no_two_public_classes_share_a_name() -> None:
    duplicated = {n: sorted(o) for n, o in _class_owners().items() if len(o) > 1}
    assert duplicated == {}, f"rename so each public class name is unique: {duplicated}"
