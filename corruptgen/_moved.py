"""Old import paths of modules that moved (into family folders, or below them) keep working, with a DeprecationWarning.

``import corruptgen.optics.kernelio`` returns the module object of ``corruptgen.families.opticsbench.kernelio``
(one module, never a second copy), so documented code written for the old layout runs unchanged.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: old module path -> new module path (sub-modules follow)
MOVED = {
    "corruptgen.optics": "corruptgen.families.opticsbench",
    "corruptgen.corruptions.imagenet_c": "corruptgen.families.imagenet_c",
    "corruptgen.corruptions.imagenet_p": "corruptgen.families.imagenet_p",
    "corruptgen.corruptions.vcr": "corruptgen.families.vcr",
    "corruptgen.corruptions.syn2nat": "corruptgen.families.syn2nat.corruptions",
    "corruptgen.corruptions.legacy": "corruptgen.families.syn2nat.albu052",
    "corruptgen.corruptions.optics": "corruptgen.families.opticsbench.corruptions",
    "corruptgen.corruptions.albu": "corruptgen.families.syn2nat.albu",
    "corruptgen.benchmarks": "corruptgen.family",
    "corruptgen.benchmarks.base": "corruptgen.family",
    "corruptgen.benchmarks.syn2nat": "corruptgen.families.syn2nat.benchmark",
    "corruptgen.benchmarks.imagenet_c": "corruptgen.families.imagenet_c.benchmark",
    "corruptgen.benchmarks.imagenet_p": "corruptgen.families.imagenet_p.benchmark",
    "corruptgen.benchmarks.vcr": "corruptgen.families.vcr.benchmark",
    "corruptgen.benchmarks.opticsbench": "corruptgen.families.opticsbench.benchmark",
    "corruptgen.hub.build": "corruptgen.reader",
    "corruptgen.eval.models": "corruptgen.models.loading",
}


def new_name(name: str) -> str | None:
    """The new path of ``name`` (the longest moved prefix decides), or ``None`` when it did not move."""
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MOVED[old] + name[len(old) :]
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.original_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.original_spec  # the import machinery stamped the alias spec on it


class MovedFinder(importlib.abc.MetaPathFinder):
    """Resolves a moved module's old name to the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; the old path will be removed in a later release",
                      DeprecationWarning, stacklevel=2)  # fmt: skip
        return importlib.machinery.ModuleSpec(fullname, _Alias(new), is_package=True)


def install() -> None:
    """Put the finder first: a moved package's ``__path__`` would otherwise let the path finder load a second copy
    of its sub-modules under the old name."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())


install()
