"""Tiny-ImageNet-C (Hendrycks & Dietterich, ICLR 2019): ``make_tinyimagenet_c.py``'s corruptions × 5 severities + clean.

The reference corrupts the 10,000 Tiny ImageNet validation images (ImageNet validation
bounding-box crops resized to 64×64): torchvision ``Resize((64, 64))``
(PIL bilinear, aspect not kept), then saves JPEG quality 85. Here 64×64 inputs are used as they are and other sizes
get that resize (preset ``resize64``). The 15 common corruptions by default, the 4 held-out ones with ``--extra``.
"""

from __future__ import annotations

from functools import cache

from ...family.benchmark import register_benchmark
from ..cifar10_c.variant import ImageNetC, variant
from ..imagenet_c import Spec, register_all
from .tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261); Tiny-ImageNet-C: hendrycks/robustness "
        "make_tinyimagenet_c.py")  # fmt: skip
SPEC = Spec("tinyimagenet_c", "Tiny-ImageNet-C", TABLES, DOMAINS, IMSIZE, FROST_RESIZE, CITE, "make_tinyimagenet_c.py")
register_all(SPEC)


@register_benchmark("tinyimagenet-c")
@cache
def tinyimagenet_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean; the 75 of the 15 common corruptions by default."""
    return variant("tinyimagenet-c", SPEC, title="Tiny-ImageNet-C", cite=CITE, size=IMSIZE, all_by_default=False)
