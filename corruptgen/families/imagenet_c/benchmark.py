"""ImageNet-C (Hendrycks & Dietterich, ICLR 2019): 15 corruptions × 5 severities, + 4 validation ones with --extra.

Protocol of the reference ``make_imagenet_c.py``: ``Resize(256)`` (PIL bilinear, shorter
side) + ``CenterCrop(224)`` (preset ``imagenet``), the corruption at a fixed severity, JPEG quality 85. Subsets are
``<corruption>_s<severity>`` (``gaussian_noise_s3``), each running ``imagenet_c/<corruption>`` with ``severity=s``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import CorruptgenError
from ...family.benchmark import CLEAN, Benchmark, Grid, Option, parse_levels, register_benchmark
from ...family.plan import Subset

CITE = ("D. Hendrycks, T. Dietterich. Benchmarking Neural Network Robustness to Common Corruptions and "
        "Perturbations. ICLR 2019 (arXiv:1903.12261).")  # fmt: skip

#: The 15 corruptions of the ImageNet-C release, in the reference script's order, and the 4 held-out ones.
COMMON = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
          "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate",
          "jpeg_compression")  # fmt: skip
EXTRA = ("speckle_noise", "gaussian_blur", "spatter", "saturate")
SEVERITIES = (1, 2, 3, 4, 5)

#: Groups (bethgelab/imagecorruptions ``get_corruption_names``); the subset ``category`` holds the id.
CATEGORY_NAMES: dict[int, str] = {1: "noise", 2: "blur", 3: "weather", 4: "digital", 5: "extra"}
GROUP_OF: dict[str, int] = {
    **dict.fromkeys(COMMON[:3], 1), **dict.fromkeys(COMMON[3:7], 2), **dict.fromkeys(COMMON[7:11], 3),
    **dict.fromkeys(COMMON[11:], 4), **dict.fromkeys(EXTRA, 5),
}  # fmt: skip

_SUBSET_RE = re.compile(r"^([a-z_]+?)_s(\d+)$")


GRID = Grid(COMMON + EXTRA, SEVERITIES)


@dataclass(frozen=True)
class ImageNetC(Benchmark):
    """ImageNet-C: ``select(names, severities=None, extra=None)``.

    ``names``: ``None`` (the 15 common corruptions), ``"all"`` (all 19), corruption names (every selected severity)
    and/or subset names (``frost_s2``). ``severities``: ``"1,3,5"`` / ``"1..5"`` / ints, filters every choice.
    ``extra``: also the 4 validation corruptions (speckle_noise, gaussian_blur, spatter, saturate).
    """

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().family_options(options)
        if "severities" in out:
            levels = parse_levels(out["severities"], SEVERITIES, "--severities")
            out["severities"] = ",".join(map(str, levels))
        if "extra" in out:
            out["extra"] = True
        return out

    def select(
        self, names: str | Sequence[str] | None, severities: Any = None, extra: bool | None = None, **unknown: Any
    ) -> tuple[Subset, ...]:
        if unknown:
            flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise CorruptgenError(f"{self.name} takes no option {flags}")
        chosen = None if severities is None else parse_levels(severities, SEVERITIES, "--severities")
        wanted = GRID.resolve(names, chosen, self.default_subsets, self.name)
        if extra:
            wanted += GRID.resolve(",".join(EXTRA), chosen, (), self.name)
        return tuple(s for name, s in self.subsets.items() if name in wanted)


@register_benchmark("imagenet-c")
@cache
def imagenet_c() -> ImageNetC:
    """95 subsets (19 corruptions × 5 severities) + clean; the 75 of the ImageNet-C release by default."""
    subsets = {"clean": CLEAN}
    for name in COMMON + EXTRA:
        for s in SEVERITIES:
            subsets[f"{name}_s{s}"] = Subset(name=f"{name}_s{s}", corruption=f"imagenet_c/{name}", severity=s,
                                             category=GROUP_OF[name], options=(("severity", s),))  # fmt: skip
    return ImageNetC(
        options=(
            Option("severities", "severities to build, e.g. 1,3,5 or 1..5 (default all)"),
            Option(
                "extra", "also the 4 held-out corruptions (speckle_noise, gaussian_blur, spatter, saturate)", "flag"
            ),
        ),
        category_names=CATEGORY_NAMES,
        name="imagenet-c",
        title="ImageNet-C",
        cite=CITE,
        subsets=subsets,
        default_subsets=tuple(f"{c}_s{s}" for c in COMMON for s in SEVERITIES),
        preprocess="imagenet",
        metrics="imagenet_c",
    )
