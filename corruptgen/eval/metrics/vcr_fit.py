"""One VCR curve from images (Shen et al., WACV 2025, §3, §4.1, Alg. 1, App. C): the Δv bins, the support the curve
rests on (or the refusal, :mod:`.vcr_support`), the monotone spline (:mod:`.vcr_spline`) and its 83 % bands
(:mod:`.vcr_bands`).

Bins: Alg. 1 writes j = ⌊v(M − 1)⌋, which leaves bin M − 1 for Δv = 1 exactly; corruptgen uses M equal-width bins
over [0, 1] (as the coverage definition does), each placed at its centre.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import CorruptgenError
from .vcr_bands import bands, bias_aware_for, bootstrap_curves
from .vcr_lp import Refitter
from .vcr_spline import (
    DEFAULT_LAMBDA,
    LEAST_SQUARES,
    QUANTILE,
    SPLINES,
    QuantileSplineLP,
    check_anchor,
    fit_monotone_spline,
)
from .vcr_support import MIN_SUPPORT, hold_band, notes, r_bounds, refusal, support

GRID = np.linspace(0.0, 1.0, 1001)
LS_LAMBDA = 1e-4  # λ of the least-squares spline
PLOT_GRID = np.linspace(0.0, 1.0, 101)
LP_METHODS = ("highs", "highs-ds", "highs-ipm")


def bin_index(delta_v: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin of each Δv (clipped to [0, 1]; Δv = max(0, 1 − VIF), so VIF > 1 lands in bin 0)."""
    v = np.clip(np.asarray(delta_v, dtype=np.float64), 0.0, 1.0)
    return np.minimum((v * n_bins).astype(np.int64), n_bins - 1)


def bin_performance(delta_v: np.ndarray, correct: np.ndarray, *, n_bins: int = 40, min_count: int = 20):
    """Per-bin rate of ``correct`` (Alg. 1): (bin centres, rate or NaN for bins under ``min_count``, counts)."""
    delta_v, correct = np.asarray(delta_v, dtype=np.float64), np.asarray(correct, dtype=np.float64)
    if delta_v.shape != correct.shape:
        raise CorruptgenError(f"VCR: {delta_v.size} Δv values but {correct.size} outcomes (one per image needed)")
    ok = np.isfinite(delta_v)
    j = bin_index(delta_v[ok], n_bins)
    count = np.bincount(j, minlength=n_bins)
    hits = np.bincount(j, weights=correct[ok], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(count >= max(min_count, 1), hits / np.maximum(count, 1), np.nan)
    return (np.arange(n_bins) + 0.5) / n_bins, rate, count


def coverage(delta_v: np.ndarray, *, n_bins: int = 40, min_count: int = 20) -> float:
    """Share of ``n_bins`` equal-width Δv bins holding at least ``min_count`` images (Shen et al., WACV 2025, §4.1)."""
    v = np.asarray(delta_v, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float((np.bincount(bin_index(v, n_bins), minlength=n_bins) >= min_count).mean())


@dataclass(frozen=True)
class VCRSettings:
    """M bins and minimum L per bin (Alg. 1, M = 40), the coverage rule, the curve estimator and its bands.

    ``spline``: ``"quantile"`` (default; τ = ``tau``) or ``"least-squares"``; ``lam``: its λ (None = the estimator's
    default: :data:`~.vcr_spline.DEFAULT_LAMBDA` or 1e-4), or ``"sic"`` (quantile only); ``min_support``: the share of
    the M bins that must hold ≥ L images for a curve to be estimated (:mod:`.vcr_support`); ``lp_method``: the HiGHS
    method of the quantile spline's LP (the answer does not depend on it); ``band_*``: the bootstrap bands
    (``band_resamples=0``: no band; ``band_bias_aware``: True, False or ``"auto"``,
    :func:`.vcr_bands.bias_aware_for`)."""

    bins: int = 40
    min_per_bin: int = 20
    coverage_bins: int = 40
    coverage_min: int = 20
    n_segments: int = 10
    lam: float | str | None = None
    sixteen: str = "argmax"  # how a 1000-way decision becomes a 16-class one when comparing with humans
    spline: str = QUANTILE
    tau: float = 0.5
    band_level: float = 0.83
    band_resamples: int = 500
    band_seed: int = 0
    band_bias_aware: bool | str = "auto"
    min_support: float = MIN_SUPPORT
    lp_method: str = "highs"

    def __post_init__(self) -> None:
        if self.spline not in SPLINES:
            raise CorruptgenError(f"VCR spline must be one of {', '.join(SPLINES)}, got {self.spline!r}")
        if isinstance(self.lam, str) and (self.lam != "sic" or self.spline != QUANTILE):
            raise CorruptgenError(
                f"VCR smoothing must be a number (or 'sic' for the quantile spline), got {self.lam!r}"
            )
        if not 0 < self.tau < 1 or not 0 < self.band_level < 1 or self.band_resamples < 0:
            raise CorruptgenError("VCR tau and band level must lie in (0, 1), band resamples >= 0")
        if self.band_resamples == 1 or not 0 <= self.min_support <= 1:
            raise CorruptgenError("VCR band resamples must be 0 or >= 2, the minimum support in [0, 1]")
        if self.band_bias_aware not in (True, False, "auto"):
            raise CorruptgenError(f"VCR band_bias_aware must be True, False or 'auto', got {self.band_bias_aware!r}")
        if self.lp_method not in LP_METHODS:
            raise CorruptgenError(f"VCR LP method must be one of {', '.join(LP_METHODS)}, got {self.lp_method!r}")

    @property
    def smoothing(self) -> float | str:
        """λ as used: the given value, or the estimator's default (3e-4 quantile, 1e-4 least squares)."""
        if self.lam is not None:
            return self.lam
        return DEFAULT_LAMBDA if self.spline == QUANTILE else LS_LAMBDA

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "lam": self.smoothing}


def _refitter(x: np.ndarray, count: np.ndarray, anchor: float | None, info: dict[str, Any],
              span: tuple[float, float], method: str):  # fmt: skip
    """(the fit's LP or None, ``refit(rates at x, anchor)``) at the fit's λ: the resamples' estimator."""
    if info["method"] == LEAST_SQUARES:

        def refit(y: np.ndarray, a: float | None):
            return fit_monotone_spline(x, y, count, anchor=a, n_segments=info["n_segments"], lam=info["lam"],
                                       support=span)  # fmt: skip

        return None, refit
    lp = QuantileSplineLP(x, np.sqrt(count), anchor=anchor, tau=info["tau"], support=span, method=method)
    return lp, (Refitter(lp, info["lam"], method) if info["lam"] is not None else None)


def fit_curve(x: np.ndarray, rate: np.ndarray, count: np.ndarray, anchor: float | None, s: VCRSettings,
              span: tuple[float, float] = (0.0, 1.0)):  # fmt: skip
    """The spline of ``s.spline`` through the bin rates (NaN = missing bin), held flat outside ``span``: (spline, its
    description, and ``refit(rates of the used bins, anchor)`` at the same λ for bootstrap resamples)."""
    ok = np.isfinite(rate)
    if s.spline == LEAST_SQUARES:
        info = {"method": LEAST_SQUARES, "lam": float(s.smoothing), "lam_rule": "fixed", "weights": "n_j",
                "n_segments": s.n_segments}  # fmt: skip
        _, refit = _refitter(x[ok], count[ok], anchor, info, span, s.lp_method)
        return refit(rate[ok], anchor), info, refit
    info = {"method": QUANTILE, "tau": s.tau, "lam_rule": s.lam if isinstance(s.lam, str) else "fixed",
            "weights": "sqrt(n_j)", "lam": None}  # fmt: skip
    lp, _ = _refitter(x[ok], count[ok], anchor, info, span, s.lp_method)
    spline = lp.fit(rate[ok], s.smoothing)
    info["lam"] = spline.lam
    return spline, info, Refitter(lp, spline.lam, s.lp_method)


def vcr_curve(
    delta_v: np.ndarray,
    correct: np.ndarray,
    anchor: float | None,
    settings: VCRSettings | None = None,
    *,
    anchor_n: int | None = None,
    key: str = "",
) -> dict[str, Any]:
    """Fit one VCR curve to images with visual change ``delta_v`` and outcome ``correct`` (right, or consistent),
    anchored at Δv = 0 to ``anchor`` (None: free; NaN is an error, as are arrays of different lengths).

    Returns ``R`` (R̂, the area; ``None`` with the reason in ``refused`` below the minimum support), ``R_bounds``,
    ``support`` (the usable bins, their Δv range, gaps, unsupported ranges and the rule there), ``notes``, ``grid``
    (the curve on 101 points of [0, 1]), ``spline`` (estimator, τ, λ and how λ was chosen), ``bins`` (x, rate or
    None, count) and ``band``: ``lo``/``hi`` (pointwise), ``simultaneous`` (sup-t) and ``se`` on the same grid, at
    ``settings.band_level``; the anchor is resampled when it was measured on ``anchor_n`` images, and ``key`` names
    the curve's bootstrap stream."""
    s = settings or VCRSettings()
    delta_v = np.asarray(delta_v, dtype=np.float64).reshape(-1)
    correct = np.asarray(correct).reshape(-1)
    check_anchor(anchor)
    x, rate, count = bin_performance(delta_v, correct, n_bins=s.bins, min_count=s.min_per_bin)
    sup = support(rate, s.bins)
    anchored = anchor is not None
    out: dict[str, Any] = {
        "R": None, "R_bounds": None, "refused": None, "anchor": anchor, "anchor_n": anchor_n, "key": key,
        "bins_used": len(sup.bins), "support": sup.to_dict(anchored), "notes": [], "grid": None,
        "spline": {"method": s.spline}, "band": None, "_spline": None,
        "bins": {"x": x.round(6).tolist(), "count": count.tolist(),
                 "y": [None if not np.isfinite(v) else float(v) for v in rate]},
    }  # fmt: skip
    out["refused"] = refusal(sup, delta_v.size, int(np.isfinite(delta_v).sum()), s.bins, s.min_per_bin, s.min_support)
    if out["refused"]:
        return out
    spline, info, refit = fit_curve(x, rate, count, anchor, s, (sup.lo, sup.hi))
    area = spline.area()
    out.update({"R": area, "R_bounds": r_bounds(area, spline, sup, anchored), "spline": info, "_spline": spline,
                "grid": spline(PLOT_GRID).round(6).tolist()})  # fmt: skip
    out["notes"] = notes(x, rate, count, anchor, anchor_n)
    if s.band_resamples:
        ok = np.isfinite(rate)
        curves = bootstrap_curves(refit, spline(x[ok]), count[ok], PLOT_GRID, anchor=anchor, anchor_n=anchor_n,
                                  resamples=s.band_resamples, seed=s.band_seed, key=key)  # fmt: skip
        aware = bias_aware_for(s.band_bias_aware, int(count[ok].sum()))
        band = bands(curves, spline(PLOT_GRID), s.band_level, bias_aware=aware)
        lo, hi, slo, shi = (np.array(v) for v in (band.lo, band.hi, band.simultaneous_lo, band.simultaneous_hi))
        for pair in ((lo, hi), (slo, shi)):
            hold_band(*pair, PLOT_GRID, sup, anchored)
        out["band"] = {"level": s.band_level, "lo": lo.round(6).tolist(), "hi": hi.round(6).tolist(),
                       "simultaneous": {"lo": slo.round(6).tolist(), "hi": shi.round(6).tolist(),
                                        "q": round(band.q, 6)},
                       "se": band.se.round(6).tolist(),
                       "method": "parametric bootstrap around the fit (binomial bin counts), sup-t simultaneous band"
                                 + (", bias-aware" if aware else "") + "; monotone bounds beyond the data",
                       "bias_aware": aware,
                       "resamples": s.band_resamples, "seed": s.band_seed,
                       "anchor_resampled": bool(anchored and anchor_n)}  # fmt: skip
        out["_refits"] = curves
    return out


def curve_refits(curve: dict[str, Any], settings: VCRSettings | None = None) -> np.ndarray:
    """The bootstrap refits (resamples × 101 grid points) behind a stored curve (a :func:`vcr_curve` result, e.g.
    from a results file), recomputed from its bins, anchor, estimator, support and band settings; the same draws
    as when it was fitted."""
    if curve.get("_refits") is not None:
        return curve["_refits"]
    s = settings or VCRSettings()
    band, bins, info = curve.get("band") or {}, curve["bins"], curve["spline"]
    ok = np.array([y is not None for y in bins["y"]])
    x, count = np.asarray(bins["x"], dtype=np.float64)[ok], np.asarray(bins["count"], dtype=np.float64)[ok]
    y = np.array([v for v in bins["y"] if v is not None], dtype=np.float64)
    span = tuple((curve.get("support") or {}).get("range") or (0.0, 1.0))
    lp, refit = _refitter(x, count, curve["anchor"], info, span, s.lp_method)
    fit = lp.solve(y, info["lam"]) if lp is not None else refit(y, curve["anchor"])
    return bootstrap_curves(refit, fit(x), count, PLOT_GRID, anchor=curve["anchor"], anchor_n=curve.get("anchor_n"),
                            resamples=band.get("resamples") or s.band_resamples,
                            seed=band.get("seed", s.band_seed), key=curve.get("key", ""))  # fmt: skip
