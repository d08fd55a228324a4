"""ImageNet-Syn2Nat (Laugros et al., BMVC 2021): the 18 selected corruptions by default, all 40 with ``all``."""

from __future__ import annotations

from functools import cache

from ...family.benchmark import CLEAN, Benchmark, register_benchmark
from ...family.plan import Subset
from .corruptions import ALL_CORRUPTIONS, CATEGORY_NAMES, SYN2NAT_18

__all__ = ["CATEGORY_NAMES", "SYN2NAT_18", "syn2nat", "syn2nat_categories"]


@register_benchmark("syn2nat")
@cache
def syn2nat() -> Benchmark:
    """One subset per candidate corruption (no severities: each draws its own random parameters per image)."""
    subsets = {c.name: Subset(name=c.name, corruption=c.qualified_name, category=c.category) for c in ALL_CORRUPTIONS}
    return Benchmark(
        category_names=CATEGORY_NAMES,
        name="syn2nat",
        title="ImageNet-Syn2Nat",
        cite="A. Laugros, A. Caplier, M. Ospici. Using Synthetic Corruptions to Measure Robustness to Natural "
        "Distribution Shifts. BMVC 2021 (arXiv:2107.12052).",
        subsets={"clean": CLEAN, **subsets},
        default_subsets=SYN2NAT_18,
        preprocess="syn2nat",
        metrics="syn2nat",
    )


def syn2nat_categories() -> dict[str, list[str]]:
    """Category id ("1".."6", paper order) -> member corruptions; the 22 others under ``"unassigned"``."""
    out: dict[str, list[str]] = {str(k): [] for k in CATEGORY_NAMES}
    out["unassigned"] = []
    for c in ALL_CORRUPTIONS:
        out[str(c.category) if c.category else "unassigned"].append(c.name)
    return out
