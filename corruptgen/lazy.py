"""Package names imported on first use (PEP 562), so that importing a package does not import what its names need
(torch, most often): the command line imports every ``cli.py`` to list its commands."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any


class _LazyPackage(types.ModuleType):
    """Importing a submodule binds it as an attribute of its package; where the package exports a name of the same
    name (``corruptgen.quality.vif`` the module, ``vif`` the function), the export stays bound instead."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in vars(self).get("_LAZY_EXPORTS", ()):
            value = getattr(value, name, value)
        super().__setattr__(name, value)


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names ``where`` maps to the submodule defining each
    (``{"vif": ".vif"}``). A name is imported on first use and then kept in the package."""
    module = sys.modules[package]
    module.__class__ = _LazyPackage
    module._LAZY_EXPORTS = dict(where)

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name], package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *where})

    return __getattr__, __dir__
