"""ImageNet-P (Hendrycks & Dietterich, ICLR 2019): perturbation sequences, difficulty 1–3."""

from . import benchmark
from .corruptions import *  # noqa: F403 (the public names of the family)
from .corruptions import __all__ as _names

__all__ = [*_names, "benchmark"]
