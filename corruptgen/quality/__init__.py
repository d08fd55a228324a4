"""Image-quality measurements: the steerable-pyramid VIF behind VCR's perceived change Δv, and pixel VIF-P.

The names load on first use (:mod:`corruptgen.lazy`), so commands that only register themselves here do not import
torch.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_WHERE = {
    "SteerablePyramid": ".steerable",
    "steerable_pyramid": ".steerable",
    "VIFReference": ".vif",
    "compare_builds": ".coverage_compare",
    "delta_v": ".vif",
    "to_gray": ".vif",
    "vif": ".vif",
    "vif_p": ".vifp",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
