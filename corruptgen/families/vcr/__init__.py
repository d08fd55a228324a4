"""VCR (Shen et al., WACV 2025): 14 continuous corruptions sampled for a uniform perceived change Δv = 1 − VIF."""

from . import benchmark
from .corruptions import *  # noqa: F403 (the public names of the family)
from .corruptions import __all__ as _names

__all__ = [*_names, "benchmark"]
