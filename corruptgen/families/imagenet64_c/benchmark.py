"""ImageNet-64×64-C (Hendrycks & Dietterich, ICLR 2019): ``make_imagenet_64_c.py``'s corruptions × 5 severities + clean.

The reference corrupts the 50,000 ImageNet validation images resized to 64×64: torchvision ``Resize((64, 64))``
(PIL bilinear, aspect not kept), then saves JPEG quality 85. Here 64×64 inputs are used as they are and other sizes
get that resize (preset ``resize64``). The 15 common corruptions by default, the 4 held-out ones with ``--extra``.
The script's constants are those of ``make_tinyimagenet_c.py``, so the tables are Tiny-ImageNet-C's (registered
again as ``imagenet64_c/<name>``).
"""

from __future__ import annotations

from functools import cache

from ...family.benchmark import register_benchmark
from ..cifar10_c.variant import ImageNetC, variant
from ..imagenet_c import Spec, register_all
from ..tinyimagenet_c.tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261); ImageNet-64×64-C: hendrycks/robustness "
        "make_imagenet_64_c.py")  # fmt: skip
SPEC = Spec("imagenet64_c", "ImageNet-64×64-C", TABLES, DOMAINS, IMSIZE, FROST_RESIZE, CITE, "make_imagenet_64_c.py")
register_all(SPEC)


@register_benchmark("imagenet64-c")
@cache
def imagenet64_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean; the 75 of the 15 common corruptions by default."""
    return variant("imagenet64-c", SPEC, title="ImageNet-64×64-C", cite=CITE, size=IMSIZE, all_by_default=False)
