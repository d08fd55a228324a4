"""CIFAR-100-C (Hendrycks & Dietterich, ICLR 2019): ``make_cifar_c.py`` run on the CIFAR-100 test set, so the same
registered ``cifar10_c/<name>`` corruptions; 19 × 5 severities + clean, all by default (as released)."""

from __future__ import annotations

from functools import cache

from ...family import register_benchmark
from ..cifar10_c.benchmark import SPEC
from ..cifar10_c.variant import ImageNetC, variant

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261); CIFAR-100-C: hendrycks/robustness make_cifar_c.py")  # fmt: skip


@register_benchmark("cifar100-c")
@cache
def cifar100_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean, all built by default (the released CIFAR-100-C)."""
    return variant("cifar100-c", SPEC, title="CIFAR-100-C", cite=CITE, size=32, all_by_default=True,
                   image_format="png")  # fmt: skip
