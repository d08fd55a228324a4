"""CIFAR-10-C (Hendrycks & Dietterich, ICLR 2019): the 19 corruptions of ``make_cifar_c.py`` × 5 severities + clean.

The reference corrupts the 10,000 CIFAR-10 test images as they are (32×32, no preprocessing) and stores raw uint8
arrays; here 32×32 inputs are used as they are and other sizes are resized to 32×32 (preset ``resize32``). All 19
corruptions are built by default, as released, and stored as PNG (lossless, like the released arrays) unless
``--format`` says otherwise; ``corruptgen export --layout cifar-c`` writes the released arrays.
"""

from __future__ import annotations

from functools import cache

from ...family.benchmark import register_benchmark
from ..imagenet_c import Spec, register_all
from .tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES
from .variant import ImageNetC, variant

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261); CIFAR-10-C: hendrycks/robustness make_cifar_c.py")  # fmt: skip
SPEC = Spec("cifar10_c", "CIFAR-10-C", TABLES, DOMAINS, IMSIZE, FROST_RESIZE, CITE, "make_cifar_c.py")
register_all(SPEC)


@register_benchmark("cifar10-c")
@cache
def cifar10_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean, all built by default (the released CIFAR-10-C)."""
    return variant("cifar10-c", SPEC, title="CIFAR-10-C", cite=CITE, size=IMSIZE, all_by_default=True,
                   image_format="png")  # fmt: skip
