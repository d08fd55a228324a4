"""ImageNet-Syn2Nat (Laugros et al., BMVC 2021): 40 albumentations corruptions in 6 categories."""

from . import benchmark, corruptions
from .corruptions import CATEGORY_NAMES, FAMILY, SYN2NAT_18

__all__ = ["CATEGORY_NAMES", "FAMILY", "SYN2NAT_18", "benchmark", "corruptions"]
