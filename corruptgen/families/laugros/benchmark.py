"""The ``laugros`` family: one subset per synthetic corruption of the thesis's Figures 3.2 and 4.3 and the flip of its
Tables 3.2-3.3, all 16 by default.

``--selection`` names the sets the thesis uses:

* ``iccvw2019``: Figure 3.2's nine and the flip, Table 3.2's ten columns (§3.2, Laugros et al., ICCVW 2019), with
  adversarial examples beside them;
* ``not-in-c``: Figure 4.3's eleven, corruptions not in ImageNet-C (§4.2.6, Table 4.1 uses border and obstruction);
* ``eccvw2020``: the four added to ImageNet-C's fifteen in §3.3.3.1 (Laugros et al., ECCVW 2020; Table 3.4b);
* ``all``: the 16 (the default).

Images are resized to 224×224 first, the thesis's only preprocessing (§3.3.3.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import CorruptgenError
from ...family.benchmark import CLEAN, Benchmark, Grid, Option, register_benchmark, split_names
from ...family.plan import Subset
from .corruptions import CITE, FAMILY, NAMES, TABLE

__all__ = ["CATEGORY_NAMES", "SELECTIONS", "Laugros", "laugros"]

#: Which figures list a corruption (the category shown by ``corruptgen list`` and on the card).
CATEGORY_NAMES = {1: "Figure 3.2 / Table 3.2 only", 2: "Figures 3.2 and 4.3", 3: "Figure 4.3 only"}


def _category(name: str) -> int:
    figures = TABLE[name][0]
    return 2 if len(figures) == 2 else 1 if figures == ("3.2",) else 3


#: §3.2's set, Table 3.2's columns in its order: Figure 3.2's nine and the flip.
TABLE_3_2 = ("gaussian_noise", "artifacts", "obstruction", "blur", "contrast", "brightness", "color_distortion",
             "translation", "rotation", "flip")  # fmt: skip
SELECTIONS: dict[str, tuple[str, ...]] = {
    "iccvw2019": TABLE_3_2,
    "not-in-c": tuple(n for n in NAMES if "4.3" in TABLE[n][0]),
    "eccvw2020": ("obstruction", "color_distortion", "translation", "rotation"),
    "all": NAMES,
}


def _selection(value: Any) -> str:
    name = value.strip().lower().replace("_", "-") if isinstance(value, str) else value
    if name not in SELECTIONS:
        raise CorruptgenError(f"--selection must be one of {', '.join(SELECTIONS)}, got {value!r}")
    return name


@dataclass(frozen=True)
class Laugros(Benchmark):
    """``select(names, selection=None)``: the selection's subsets, or those ``names`` picks among them."""

    def family_options(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().family_options(options)
        if "selection" in out:
            out["selection"] = _selection(out["selection"])
            if out["selection"] == "all":  # the default: same plan id as leaving it out
                del out["selection"]
        return out

    def select(self, names: str | Sequence[str] | None, selection: Any = None, **unknown: Any) -> tuple[Subset, ...]:
        if unknown:
            raise CorruptgenError(f"{self.name} takes no option {', '.join('--' + k for k in unknown)}")
        chosen = SELECTIONS["all" if selection is None else _selection(selection)]
        if names is not None and selection is not None:
            tokens = [t for t in split_names(names) if t not in ("all", "clean")]
            outside = [t for t in tokens if t in NAMES and t not in chosen]
            if outside:
                raise CorruptgenError(f"{', '.join(outside)} not in --selection {selection} ({', '.join(chosen)})")
        grid = Grid(chosen if selection is not None else NAMES, ordered=True)
        wanted = grid.resolve(names, None, chosen, self.name)
        return tuple(self.subsets[n] for n in wanted)


@register_benchmark("laugros")
@cache
def laugros() -> Laugros:
    """16 subsets (one per corruption) + clean, all by default."""
    subsets = {n: Subset(name=n, corruption=f"{FAMILY}/{n}", category=_category(n)) for n in NAMES}
    return Laugros(
        name="laugros",
        title="Laugros thesis synthetic corruptions (Figures 3.2 and 4.3, Table 3.2's flip)",
        cite=f"{CITE} (Figures 3.2 and 4.3, Tables 3.2-3.3; Laugros et al., ICCVW 2019 and ECCVW 2020)",
        subsets={"clean": CLEAN, **subsets},
        default_subsets=NAMES,
        preprocess="resize224",
        metrics="laugros",
        category_names=CATEGORY_NAMES,
        options=(Option("selection", f"the thesis's sets: {', '.join(SELECTIONS)} (default all)"),),
    )
