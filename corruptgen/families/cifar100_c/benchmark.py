"""CIFAR-100-C (Hendrycks & Dietterich, ICLR 2019): ``make_cifar_c.py`` run on the CIFAR-100 test set, so CIFAR-10-C's
constants (registered again as ``cifar100_c/<name>``); 19 corruptions × 5 severities + clean, all by default (as
released), stored as PNG unless ``--format`` says otherwise."""

from __future__ import annotations

from functools import cache

from ...family.benchmark import register_benchmark
from ..cifar10_c.tables import DOMAINS, FROST_RESIZE, IMSIZE, TABLES
from ..cifar10_c.variant import ImageNetC, variant
from ..imagenet_c import Spec, register_all

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261); CIFAR-100-C: hendrycks/robustness make_cifar_c.py")  # fmt: skip
SPEC = Spec("cifar100_c", "CIFAR-100-C", TABLES, DOMAINS, IMSIZE, FROST_RESIZE, CITE, "make_cifar_c.py")
register_all(SPEC)


@register_benchmark("cifar100-c")
@cache
def cifar100_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean, all built by default (the released CIFAR-100-C)."""
    return variant("cifar100-c", SPEC, title="CIFAR-100-C", cite=CITE, size=IMSIZE, all_by_default=True,
                   image_format="png")  # fmt: skip
