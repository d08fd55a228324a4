"""Confidence bands of a VCR curve and the two-curve test (Shen et al., WACV 2025, §4.4, App. E.1: 83 % bands).

* **Resamples.** A parametric bootstrap around the fit: each usable bin's count is redrawn from Binomial(n_j, p_j),
  p_j = ĝ_j (the fitted curve at the bin) kept within [½/n_j, 1 − ½/n_j] (a fitted 0 or 1 is not resolved finer than
  half an image: where the true rate is ~1/n_j the median fit sits at 0 while the truth does not); a measured anchor
  (n₀ clean images) likewise, a known one (1 for a deterministic model's consistency) stays. Every resample is
  refitted at the fit's λ. Around the fit, not the raw rates: those put their bin-to-bin scatter into the bootstrap
  world's "truth", whose refits wiggle more than the real fit does. Discrete counts, not a continuous redraw: the bin
  rates are multiples of 1/n_j and the median fit sticks to such values, which a continuous redraw does not, so its
  refits vary more than the fit does on a flat stretch (bands too wide there).
* **Pointwise band**: ĝ(v) ± z σ(v), σ the standard deviation of the refits at v and z the normal quantile of the
  level. Centred on the fit: percentiles of the refits would add the smoothing bias a second time (the refits of a
  smoothed curve are smoothed again), which is what pulled the earlier percentile band below the truth before a drop.
* **Simultaneous band** (sup-t): ĝ(v) ± q σ(v), q the level-quantile of max_v |ĝ*_b(v) − ḡ*(v)| / σ(v) over the
  resamples b (points with σ = 0, a known anchor, are left out): the whole curve lies in it with probability ≈ level
  while the fit's smoothing bias stays small against σ. At a fixed λ it does not as N grows (the noise shrinks, the
  smoothing does not): ``bias_aware`` measures the deviations from ĝ instead of ḡ*, adding the refits' offset; by
  default (:func:`bias_aware_for`) for curves of :data:`AUTO_BIAS_AWARE_IMAGES` images and more.
* **Two curves** (:func:`difference_test`): the difference of independent fits, standardised by √(σ_a² + σ_b²);
  its sup over the compared Δv points against the (1 − α) quantile of the same sup over paired resamples — a test
  of "the same curve" at level α over the whole range (the paper's 83 % overlap rule is the 5 % test of one point).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

MIN_SE = 1e-9  # a point whose resampled values do not vary (a known anchor) is left out of the sup statistics
#: ``band_bias_aware="auto"`` (the default): bias-aware bands for curves fitted on at least this many images. At the
#: fixed λ the fit's smoothing bias stays while the noise shrinks as 1/√N: in the coverage simulation
#: (``scripts/vcr_band_coverage.py``, docs/vcr.md) the plain sup-t band holds the whole curve ≈ 83 % of the time up
#: to 2,000 images and falls below 0.80 at 5,000, the bias-aware one over-covers up to 2,000 and holds it at 5,000.
AUTO_BIAS_AWARE_IMAGES = 3000


def bias_aware_for(setting: bool | str, images: int) -> bool:
    """Whether a curve fitted on ``images`` images gets bias-aware bands under ``setting`` (True, False or
    ``"auto"``: from :data:`AUTO_BIAS_AWARE_IMAGES` on)."""
    return images >= AUTO_BIAS_AWARE_IMAGES if setting == "auto" else bool(setting)


@dataclass(frozen=True)
class Band:
    """Pointwise (``lo``, ``hi``) and simultaneous (``simultaneous_lo``, ``simultaneous_hi``) ``level`` bands around a
    fit, the refits' standard deviation ``se`` and the sup-t critical value ``q``."""

    lo: np.ndarray
    hi: np.ndarray
    simultaneous_lo: np.ndarray
    simultaneous_hi: np.ndarray
    se: np.ndarray
    q: float
    level: float


def generator(seed: int, key: str) -> np.random.Generator:
    """The bootstrap stream of one curve: from (``seed``, ``key``), so curves with other keys draw independently."""
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


def bootstrap_curves(
    refit: Callable[[np.ndarray, float | None], Callable[[np.ndarray], np.ndarray]],
    fitted: np.ndarray,
    count: np.ndarray,
    grid: np.ndarray,
    *,
    anchor: float | None = None,
    anchor_n: int | None = None,
    resamples: int = 500,
    seed: int = 0,
    key: str = "",
) -> np.ndarray:
    """``resamples`` × len(``grid``) refitted curves: ``refit(rates, anchor)`` of rates redrawn around ``fitted``
    (the fit at each used bin, n_j = ``count``), and of the anchor when it was measured on ``anchor_n`` images."""
    rng = generator(seed, key)
    n = np.asarray(count, dtype=np.int64)
    p = np.clip(np.asarray(fitted, dtype=np.float64), 0.5 / n, 1 - 0.5 / n)  # half an image right and wrong at least
    redraw_anchor = anchor is not None and bool(anchor_n)
    p0 = float(np.clip(float(anchor), 0.5 / anchor_n, 1 - 0.5 / anchor_n)) if redraw_anchor else 0.0
    curves = np.empty((resamples, len(grid)))
    for b in range(resamples):
        y = rng.binomial(n, p) / n
        a = rng.binomial(anchor_n, p0) / anchor_n if redraw_anchor else anchor
        curves[b] = refit(y, a)(grid)
    return curves


def sup_quantile(dev: np.ndarray, se: np.ndarray, level: float, mask: np.ndarray | None = None) -> float:
    """The ``level`` quantile over rows of max_v |dev[:, v]| / se[v] (v with se > 0, and in ``mask``)."""
    use = se > MIN_SE if mask is None else (se > MIN_SE) & mask
    if not use.any():
        return 0.0
    return float(np.quantile(np.max(np.abs(dev[:, use]) / se[use], axis=1), level))


def bands(curves: np.ndarray, fit: np.ndarray, level: float = 0.83, *, bias_aware: bool = False) -> Band:
    """Pointwise and sup-t simultaneous ``level`` bands around ``fit`` from the refitted ``curves`` (module
    docstring), clipped to [0, 1]. ``bias_aware``: the refits' deviations are taken from the fit, not from their
    mean, so their offset (the bootstrap's estimate of the smoothing bias) widens both bands where it is large: the
    simultaneous q is the quantile of max_v |ĝ*_b − ĝ| / σ, the pointwise half-width the per-point quantile of
    |ĝ*_b(v) − ĝ(v)|."""
    from scipy.stats import norm

    se = curves.std(axis=0, ddof=1) if len(curves) > 1 else np.zeros(curves.shape[1])
    q = sup_quantile(curves - (fit if bias_aware else curves.mean(axis=0)), se, level)
    half = np.quantile(np.abs(curves - fit), level, axis=0) if bias_aware else float(norm.ppf((1 + level) / 2)) * se

    def clip(v: np.ndarray) -> np.ndarray:
        return np.clip(v, 0.0, 1.0)

    return Band(clip(fit - half), clip(fit + half), clip(fit - q * se), clip(fit + q * se), se, q, level)


def difference_test(
    a: np.ndarray, fit_a: np.ndarray, b: np.ndarray, fit_b: np.ndarray, *, alpha: float = 0.05,
    mask: np.ndarray | None = None, simultaneous: bool = True,
) -> tuple[np.ndarray, float]:  # fmt: skip
    """Where two independently fitted curves differ at level ``alpha``: (a boolean mask over the grid, the critical
    value). ``a``, ``b``: their refits (same count); ``simultaneous``: one test over all points of ``mask`` (the sup
    of the standardised difference against its bootstrap quantile), else each point alone (normal quantile)."""
    from scipy.stats import norm

    se = np.sqrt(a.var(axis=0, ddof=1) + b.var(axis=0, ddof=1))
    use = se > MIN_SE if mask is None else (se > MIN_SE) & mask
    if simultaneous:
        dev = (a - a.mean(axis=0)) - (b - b.mean(axis=0))
        q = sup_quantile(dev, se, 1 - alpha, use)
    else:
        q = float(norm.ppf(1 - alpha / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        differ = use & (np.abs(fit_a - fit_b) > q * se)
    return differ, q
