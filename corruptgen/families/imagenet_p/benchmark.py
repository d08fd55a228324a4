"""ImageNet-P (Hendrycks & Dietterich, ICLR 2019): perturbation sequences stored as JPEG frames.

Protocol of the reference ``make_imagenet_p.py``: ``Resize(256)`` only (preset
``imagenet_resize``); every sequence warps or perturbs and centre-crops 224 itself. A sample is one sequence: frames
``<key>.000.jpg … <key>.NNN.jpg`` and ``<key>.json`` with ``"frames": T``. Subsets: the 10 test perturbations by
default, ``all`` adds the 4 validation ones; ``--difficulty d`` (1–3) picks the noise level of the noise sequences
and is the evaluation stride of the others (same frames); subsets of difficulty d ≠ 1 are named ``<name>_d<d>``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...corruptions import get
from ...errors import CorruptgenError
from ...family.benchmark import Benchmark, Grid, Option, register_benchmark
from ...family.plan import Subset
from ...family.preprocess import Preprocess, get_preprocess
from ..imagenet_c.benchmark import CITE
from .corruptions import CATEGORY_NAMES, DIFFICULTIES, TEST_PERTURBATIONS, VALIDATION_PERTURBATIONS

__all__ = ["CATEGORY_NAMES", "ImageNetP", "imagenet_p"]

PERTURBATIONS = TEST_PERTURBATIONS + VALIDATION_PERTURBATIONS
_DIFF_RE = re.compile(r"^([a-z_]+)_d(\d+)$")


def check_difficulty(value: Any) -> int:
    """1, 2 or 3 (an int or its string); anything else fails in one line."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or int(text) not in DIFFICULTIES:
        raise CorruptgenError(f"--difficulty must be 1, 2 or 3, got {value!r}")
    return int(text)


def sequence_subset(name: str, difficulty: int) -> Subset:
    """The subset rendering perturbation ``name`` at ``difficulty`` (named ``name`` or ``name_d<difficulty>``)."""
    return Subset(name=name if difficulty == 1 else f"{name}_d{difficulty}", corruption=f"imagenet_p/{name}",
                  severity=difficulty, category=get(f"imagenet_p/{name}").category,
                  options=(("difficulty", difficulty),))  # fmt: skip


GRID = Grid(
    PERTURBATIONS,
    DIFFICULTIES,
    default_levels=(1,),
    flag="--difficulty",
    level_name="difficulty",
    suffix="_d",
    bare_level=1,
)


@dataclass(frozen=True)
class ImageNetP(Benchmark):
    """ImageNet-P: ``select(names, difficulty=None)``; the clean subset is ``imagenet_p/clean`` (the centre crop)."""

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().family_options(options)
        if "difficulty" in out:
            out["difficulty"] = check_difficulty(out["difficulty"])
            if out["difficulty"] == 1:  # the default: same plan as no flag
                del out["difficulty"]
        return out

    def clean_subset(self, size: int | None) -> Subset:
        return self.subsets["clean"]

    def preprocessing(self, name: str | None, size: int | None) -> Preprocess:
        """The resize-only preset, scaled by ``size / 224`` for ``--size`` (the sequences then crop ``size``)."""
        pre = get_preprocess(name or self.preprocess)
        if pre.crop is not None:
            raise CorruptgenError(f"{self.name} warps the image before its centre crop; use a preprocessing without "
                                  f"a crop (imagenet_resize, none), not {pre.name!r}")  # fmt: skip
        if size is None:
            return pre
        if size < 8:
            raise CorruptgenError(f"--size must be at least 8, got {size}")
        factor = size / 224
        resize = None if pre.resize is None else (round(pre.resize[0] * factor), round(pre.resize[1] * factor))
        short = None if pre.resize_short is None else round(pre.resize_short * factor)
        return Preprocess(f"{pre.name}@{size}", resize, short, None, pre.interpolation, pre.library)

    def sized(self, subsets: tuple[Subset, ...], size: int | None) -> tuple[Subset, ...]:
        """Every subset crops ``size`` (224 by default) itself."""
        crop = 224 if size is None else int(size)
        return tuple(dataclasses.replace(s, options=(*s.options, ("crop", crop))) for s in subsets)

    def select(self, names: str | Sequence[str] | None, difficulty: Any = None, **unknown: Any) -> tuple[Subset, ...]:
        if unknown:
            flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise CorruptgenError(f"{self.name} takes no option {flags}")
        chosen = None if difficulty is None else (check_difficulty(difficulty),)
        out = []
        for name in GRID.resolve(names, chosen, self.default_subsets, self.name):
            cell = GRID.cell(name)
            out.append(self.subsets["clean"] if cell is None else sequence_subset(*cell))
        return tuple(out)


@register_benchmark("imagenet-p")
@cache
def imagenet_p() -> ImageNetP:
    """The 14 sequences (difficulty 1 listed) + the clean centre crop; the 10 of the ImageNet-P release by default."""
    subsets = {"clean": Subset(name="clean", corruption="imagenet_p/clean")}
    subsets.update({p: sequence_subset(p, 1) for p in PERTURBATIONS})
    return ImageNetP(
        options=(Option("difficulty", "difficulty 1-3 (default 1)", "int"),),
        category_names=CATEGORY_NAMES,
        name="imagenet-p",
        title="ImageNet-P",
        cite=CITE,
        subsets=subsets,
        default_subsets=TEST_PERTURBATIONS,
        preprocess="imagenet_resize",
        metrics="imagenet_p",
    )
