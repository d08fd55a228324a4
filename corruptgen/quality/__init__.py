"""Image-quality measurements: the steerable-pyramid VIF behind VCR's perceived change Δv, and pixel VIF-P.

The names load on first use (PEP 562), so commands that only register themselves here do not import torch.
"""

from __future__ import annotations

import importlib
import sys
import types

_LAZY = {
    "SteerablePyramid": ".steerable",
    "steerable_pyramid": ".steerable",
    "VIFReference": ".vif",
    "delta_v": ".vif",
    "to_gray": ".vif",
    "vif": ".vif",
    "vif_p": ".vifp",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """Importing the submodule ``vif`` binds it as this package's attribute ``vif``; the package's ``vif`` is the
    function (as when the names were imported eagerly), so the binding keeps the function."""

    def __setattr__(self, name: str, value) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            value = getattr(value, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
