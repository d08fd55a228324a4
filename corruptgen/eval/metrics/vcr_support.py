"""What a VCR curve rests on (Shen et al., WACV 2025, §4.1, App. C): the Δv bins it used, the range they cover, a
refusal below a minimum support, the rule beyond the data, and notes when the data contradict the model of the curve.

* **Support**: the bins holding ≥ L images (Alg. 1's usable bins, the paper's coverage rule of 40 bins with ≥ 20
  images each); its ``range`` runs from the lower edge of the first to the upper edge of the last, ``gaps`` are the
  Δv ranges inside without a usable bin (the spline interpolates there), ``unsupported`` the ranges outside.
* **Refusal**: with fewer than ``min_support`` × M usable bins (default half: 20 of 40), R̂, the band, HMRI and MRSI
  are not estimated (``null`` with the reason). The paper reports VCR for test sets whose coverage is 64–100 % (Tab. 2)
  and argues that missing low Δv matters little because the curve is anchored (§4.1, App. C); below half of the
  bins the area rests more on the anchor and the rule at the ends than on data (200 images in 40 bins: no bin of 20,
  and the old estimate was the anchor itself). A uniform build needs ≈ 800 images per curve to pass.
* **The ends**: at Δv = 0 the curve starts at its known value, the anchor (the clean accuracy for s_a, 1 for a
  deterministic model's s_p), and runs linearly to the first usable bin; an unanchored curve (human s_p) is held flat
  below its first bin. Beyond the upper edge of the last usable bin the curve is held flat at its value there: the
  paper also names a known value for the last bin, but the chance level belongs to Δv = 1 exactly (nothing left of
  the image), which measured Δv does not reach while texture remains (VIF keeps a floor of ≈ 0.02–0.1), so a drop
  to it would be invented. A non-increasing curve lies between 0 and that value there, which ``R_bounds`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

MIN_SUPPORT = 0.5
RISE_Z = 3.0  # z-score above which rates that rise with Δv (or lie above the anchor) get a note


@dataclass(frozen=True)
class Support:
    """The usable bins (indices, share of all bins) and the Δv they cover."""

    bins: list[int]
    share: float
    lo: float | None
    hi: float | None
    gaps: list[list[float]]

    def unsupported(self) -> list[list[float]]:
        """The Δv ranges outside [lo, hi] (all of [0, 1] without a usable bin)."""
        if self.lo is None or self.hi is None:
            return [[0.0, 1.0]]
        return [r for r in ([0.0, self.lo], [self.hi, 1.0]) if r[1] - r[0] > 1e-12]

    def to_dict(self, anchored: bool) -> dict[str, Any]:
        rule = ("below the first usable bin: a line from the anchor at Δv = 0" if anchored else
                "below the first usable bin: held flat at its value there")  # fmt: skip
        return {"bins": self.bins, "share": self.share,
                "range": None if self.lo is None else [self.lo, self.hi], "gaps": self.gaps,
                "unsupported": self.unsupported(),
                "ends": f"{rule}; beyond the last usable bin: held flat at its value there"}  # fmt: skip


def support(rate: np.ndarray, n_bins: int) -> Support:
    """The :class:`Support` of per-bin rates (NaN = bin under L)."""
    used = np.flatnonzero(np.isfinite(rate))
    if not len(used):
        return Support([], 0.0, None, None, [])
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    gaps = [[round(float(edges[a + 1]), 6), round(float(edges[b]), 6)] for a, b in pairwise(used) if b > a + 1]
    return Support(used.tolist(), len(used) / n_bins, round(float(edges[used[0]]), 6),
                   round(float(edges[used[-1] + 1]), 6), gaps)  # fmt: skip


def refusal(sup: Support, n: int, finite: int, n_bins: int, min_per_bin: int, min_support: float) -> str | None:
    """Why no curve is estimated from these bins (None: it is)."""
    if n == 0:
        return "no images"
    if finite == 0:
        return f"none of the {n} images has a finite Δv"
    need = int(np.ceil(min_support * n_bins - 1e-9))
    if len(sup.bins) < max(need, 1):
        return (f"{len(sup.bins)} of {n_bins} Δv bins hold ≥ {min_per_bin} images ({finite} images); the minimum "
                f"support is {need} bins (min_support {min_support:g})")  # fmt: skip
    return None


def r_bounds(area: float, curve: Any, sup: Support, anchored: bool) -> list[float]:
    """[low, high] of R̂ if the curve were any non-increasing curve in [0, 1] over the unsupported ranges (where the
    fit is held flat): above the support between 0 and g(hi), below it (unanchored) between g(lo) and 1."""
    lo_area, hi_area = area, area
    if sup.hi is not None and sup.hi < 1.0:
        lo_area -= float(curve(sup.hi)) * (1.0 - sup.hi)
    if not anchored and sup.lo:
        hi_area += (1.0 - float(curve(sup.lo))) * sup.lo
    return [round(lo_area, 12), round(hi_area, 12)]


def hold_band(lo: np.ndarray, hi: np.ndarray, grid: np.ndarray, sup: Support, anchored: bool) -> None:
    """Widen a band (in place) over the unsupported ranges to what a non-increasing curve allows: above the support
    [0, the band's top at its edge]; below it (unanchored) [the band's bottom at its edge, 1]."""
    if sup.hi is not None and sup.hi < 1.0:
        beyond = grid > sup.hi + 1e-9
        hi[beyond], lo[beyond] = np.interp(sup.hi, grid, hi), 0.0
    if not anchored and sup.lo:
        below = grid < sup.lo - 1e-9
        lo[below], hi[below] = np.interp(sup.lo, grid, lo), 1.0


def notes(x: np.ndarray, rate: np.ndarray, count: np.ndarray, anchor: float | None, anchor_n: int | None) -> list[str]:
    """Notes when the data contradict a non-increasing curve: bin rates that rise with Δv (weighted least-squares
    slope, z > 3), or the first usable bins above the anchor (z > 3); the curve then stays flat below them."""
    ok = np.isfinite(rate)
    x, y, n = x[ok], rate[ok], count[ok].astype(np.float64)
    out = []
    if len(x) >= 3:
        p = float(np.sum(n * y) / n.sum())
        var = max(p * (1 - p), 0.25 / n.sum())  # pooled binomial variance of a bin rate is var / n_j
        xm = float(np.sum(n * x) / n.sum())
        sxx = float(np.sum(n * (x - xm) ** 2))
        if sxx > 0:
            slope = float(np.sum(n * (x - xm) * (y - p)) / sxx)
            z = slope / np.sqrt(var / sxx)
            if z > RISE_Z:
                out.append(f"the bin rates rise with Δv (slope {slope:+.3f} per unit Δv, z = {z:.1f}): a "
                           "non-increasing curve cannot follow them and stays flat where they rise")  # fmt: skip
    if anchor is not None and len(x):
        first = slice(0, min(4, len(x)))
        p = float(np.sum(n[first] * y[first]) / n[first].sum())
        var = p * (1 - p) / n[first].sum() + (anchor * (1 - anchor) / anchor_n if anchor_n else 0.0)
        z = (p - anchor) / np.sqrt(max(var, 1e-12))
        if z > RISE_Z:
            out.append(f"the first usable bins ({p:.3f}) lie above the anchor at Δv = 0 ({anchor:.3f}; z = {z:.1f}): "
                       "the curve cannot rise above its anchor and stays flat at it")  # fmt: skip
    return out
