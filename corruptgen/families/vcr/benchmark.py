"""VCR (Shen et al., WACV 2025): 14 corruptions whose perceived change Δv is uniform on [0, 1], with Δv on every sample.

One subset per corruption (``gaussian_noise``, ..., ``uniform_noise``; see :mod:`corruptgen.families.vcr`), each
running ``vcr/<name>`` on the ``imagenet`` preprocessing (Resize 256 + CenterCrop 224: the 224 px the models see).
Family options: ``per_image`` (samples per source image, default 1; each has its own seed and target),
``delta_v`` (``uniform``: per-image search towards a uniform target, default; ``param``: the paper's uniform
parameter sampling, Algorithm 1) and ``search_group`` (samples whose Δv searches share VIF batches, default
:data:`SEARCH_GROUP`; part of the plan, since the batch a candidate is scored in can move its VIF's last bits).
Every VCR subset also receives the build's ``image_format`` and ``quality``, so Δv is measured on the images exactly
as they are stored (see :meth:`VCR.plan`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import CorruptgenError
from ...family.benchmark import CLEAN, Benchmark, Grid, Option, register_benchmark
from ...family.plan import Plan, Subset
from .corruptions import CATEGORY, CATEGORY_NAMES, DELTA_V_MODES, NAMES
from .search import REVISION as SEARCH_REVISION

__all__ = ["CATEGORY_NAMES", "CITE", "VCR", "vcr"]

CITE = ("H. Shen, M. Hu, K. Czarnecki, L. Marsso, M. Chechik. Assessing Visually-Continuous Corruption Robustness of "
        "Neural Networks Relative to Human Performance. WACV 2025 (arXiv:2402.19401).")  # fmt: skip


def _per_image(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CorruptgenError(f"--per-image must be a positive integer, got {value!r}")
    return value


#: Default number of consecutive samples of a subset searched together (one VIF batch of up to this many candidates
#: per round): 4 measured fastest per CPU-second on one core (2 and 8: ~15–20 % slower; a sample's search is the same
#: for any group size, only the batches differ).
SEARCH_GROUP = 4


def _search_group(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise CorruptgenError(f"--search-group must be an integer in 1..1024, got {value!r}")
    return value


def _mode(value: Any) -> str:
    mode = value.strip().lower() if isinstance(value, str) else value
    if mode not in DELTA_V_MODES:
        raise CorruptgenError(f"--delta-v must be one of {', '.join(DELTA_V_MODES)}, got {value!r}")
    return mode


@dataclass(frozen=True)
class VCR(Benchmark):
    """VCR: ``select(names, per_image=None, delta_v=None, search_group=None)``.

    ``names``: ``None`` or ``"all"`` (the 14 corruptions) or corruption names. ``per_image``: samples per input
    (keys ``<key>_<j:03d>``), default 1. ``delta_v``: ``uniform`` (default) or ``param``. ``search_group``: samples
    searched together in uniform mode (default :data:`SEARCH_GROUP`).
    """

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().family_options(options)
        if "per_image" in out:
            out["per_image"] = _per_image(out["per_image"])
            if out["per_image"] == 1:  # the default: same plan id as leaving it out
                del out["per_image"]
        if "delta_v" in out:
            out["delta_v"] = _mode(out["delta_v"])
            if out["delta_v"] == "uniform":
                del out["delta_v"]
        if "search_group" in out:
            out["search_group"] = _search_group(out["search_group"])
            if out["search_group"] == SEARCH_GROUP:
                del out["search_group"]
        return out

    def select(
        self,
        names: str | Sequence[str] | None,
        per_image: Any = None,
        delta_v: Any = None,
        search_group: Any = None,
        **unknown: Any,
    ) -> tuple[Subset, ...]:
        if unknown:
            flags = ", ".join("--" + k.replace("_", "-") for k in unknown)
            raise CorruptgenError(f"{self.name} takes no option {flags}")
        n = 1 if per_image is None else _per_image(per_image)
        mode = "uniform" if delta_v is None else _mode(delta_v)
        group = SEARCH_GROUP if search_group is None else _search_group(search_group)
        uniform = (("delta_v", mode), ("search", SEARCH_REVISION), ("search_group", group))
        options = uniform if mode == "uniform" else (("delta_v", mode),)
        wanted = Grid(NAMES, ordered=True).resolve(names, None, self.default_subsets, self.name)
        chosen = []
        for name in dict.fromkeys(wanted):
            subset = self.subsets[name]
            if subset.corruption is not None:
                subset = dataclasses.replace(subset, per_input=n, options=options)
            chosen.append(subset)
        return tuple(chosen)

    def plan(self, **kwargs: Any) -> Plan:
        """The base plan, with the build's codec added to every VCR subset's options (``image_format``,
        ``quality``): the corruption measures Δv between the clean and the corrupted image after the same
        encode → decode as the shards, so the stored ``delta_v`` is the Δv of the stored pair."""
        plan = super().plan(**kwargs)
        codec = (("image_format", plan.image_format), ("quality", plan.quality))
        subsets = tuple(
            dataclasses.replace(s, options=(*s.options, *codec)) if s.corruption else s for s in plan.subsets
        )
        return dataclasses.replace(plan, subsets=subsets)


@register_benchmark("vcr")
@cache
def vcr() -> VCR:
    """14 subsets (one per corruption) + clean, all by default."""
    subsets = {"clean": CLEAN}
    for name in NAMES:
        subsets[name] = Subset(name=name, corruption=f"vcr/{name}", category=CATEGORY[name])
    return VCR(
        options=(
            Option("per_image", "samples per source image (default 1)", "int"),
            Option("delta_v", "uniform (target a uniform perceived change, default) or param"),
            Option("search_group", f"samples whose Δv searches share VIF batches (default {SEARCH_GROUP})", "int"),
        ),
        category_names=CATEGORY_NAMES,
        name="vcr",
        title="VCR (visually-continuous corruptions, uniform Δv)",
        cite=CITE,
        subsets=subsets,
        default_subsets=NAMES,
        preprocess="imagenet",
        metrics="vcr",
    )
