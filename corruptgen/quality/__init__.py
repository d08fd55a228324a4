"""Image-quality measurements: the steerable-pyramid VIF behind VCR's perceived change Δv, and pixel VIF-P."""

from .steerable import SteerablePyramid, steerable_pyramid
from .vif import VIFReference, delta_v, to_gray, vif
from .vifp import vif_p

__all__ = ["SteerablePyramid", "VIFReference", "delta_v", "steerable_pyramid", "to_gray", "vif", "vif_p"]
