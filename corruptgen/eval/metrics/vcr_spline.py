"""The VCR curve estimator: a monotone (non-increasing), anchored quantile smoothing spline, and its 83 % bands.

Shen et al. (WACV 2025, §3 and App. C) smooth the per-bin rates a_v / p_v with "monotonic smoothing splines" citing
Koenker, Ng & Portnoy, "Quantile smoothing splines", Biometrika 81(4), 1994: the τ-th quantile curve minimising

.. math:: \\frac{1}{n}\\sum_j \\bar w_j\\,\\rho_\\tau\\big(y_j - g(x_j)\\big) + \\lambda\\,V(g'),
   \\qquad \\rho_\\tau(r) = r\\,(\\tau - [r < 0]),

with V(g') the total variation of the slope. Its solution is a linear spline with knots at the data points (KNP94,
§2), so the problem is a linear program; the non-increasing constraint and the anchor g(0) = a (the clean accuracy,
or 1 for a deterministic model's consistency) are linear too, as in Ng & Maechler's COBS (constraint "decrease",
a pointwise constraint at 0). It is solved exactly with HiGHS (``scipy.optimize.linprog(method="highs")``).

The data term is the L1 (median, τ = ½) loss, so a bin whose rate is off by a lot (an outlier bin) moves the curve
far less than under least squares. Weights w̄_j = √n_j normalised to mean 1: a bin rate's standard error is
√(p(1 − p)/n_j), and the efficient weights of an L1 fit are the inverse error scales (the least-squares fit uses the
inverse variances n_j).

λ: a fixed :data:`DEFAULT_LAMBDA` (on the mean-loss scale above, so it does not depend on the number of bins),
chosen by the simulation in ``scripts/vcr_spline_study.py`` (docs/vcr.md); ``lam="sic"`` picks λ on a grid by KNP's
Schwarz criterion SIC(λ) = log(n⁻¹ Σ w̄ ρ_τ(r_j)) + ½ n⁻¹ p_λ log n (p_λ = interpolated points), which the same
study shows over-smoothing when outlier bins inflate the residual scale.

Bands: pointwise percentile bootstrap over the images within each bin (a bin of n_j images with rate y_j is
resampled as Binomial(n_j, y_j)/n_j; an anchor measured on n_0 clean images likewise), refitted at the chosen λ,
with a fixed seed. The paper compares curves by whether their 83 % intervals overlap (§4.4, App. E.1): two
independent estimates whose 83.4 % intervals do not overlap differ at about the 5 % level (Payton, Greenstone &
Schenker, J. Insect Science 2003; Austin & Hux, J. Vasc. Surg. 2002).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

QUANTILE = "quantile"
LEAST_SQUARES = "least-squares"
SPLINES = (QUANTILE, LEAST_SQUARES)
#: λ of the quantile spline (mean-loss scale); see the module docstring and docs/vcr.md.
DEFAULT_LAMBDA = 3e-4
#: The λ grid searched with ``lam="sic"`` (as COBS searches a log grid).
SIC_GRID = np.geomspace(1e-5, 1e-1, 17)
ZERO_RESIDUAL = 1e-6  # |r| below this counts as interpolated (COBS' tol.0res)


@dataclass(frozen=True)
class LinearSpline:
    """A piecewise-linear curve on [0, 1] through (``knots``, ``values``); ``lam`` is the λ it was fitted with."""

    knots: np.ndarray
    values: np.ndarray
    lam: float = 0.0

    def __call__(self, v: np.ndarray | float) -> np.ndarray:
        return np.interp(np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0), self.knots, self.values)

    def area(self) -> float:
        """∫₀¹ g(v) dv, exact for a linear spline (the trapezoid over its knots)."""
        return float(np.trapezoid(self.values, self.knots))


def constant_curve(anchor: float | None) -> LinearSpline:
    """The curve without data: the constant anchor (or 0)."""
    level = 0.0 if anchor is None else float(np.clip(anchor, 0.0, 1.0))
    return LinearSpline(np.array([0.0, 1.0]), np.array([level, level]))


def fit_quantile_spline(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    anchor: float | None = None,
    tau: float = 0.5,
    lam: float | str = DEFAULT_LAMBDA,
) -> LinearSpline:
    """Monotone (non-increasing) quantile smoothing spline of points (x, y) on [0, 1] with weights w.

    Minimises the KNP94 objective of the module docstring over linear splines with knots at 0, every distinct x and
    1, subject to g non-increasing, 0 ≤ g ≤ 1 and, with ``anchor``, g(0) = anchor. ``lam`` is a number or ``"sic"``
    (Schwarz criterion over :data:`SIC_GRID`). NaN points are ignored; with none left the curve is the constant
    anchor (or 0). One HiGHS linear program per λ.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    if not ok.any():
        return constant_curve(anchor)
    return QuantileSplineLP(x[ok], w[ok], anchor=anchor, tau=tau).fit(y[ok], lam)


class QuantileSplineLP:
    """The linear program of :func:`fit_quantile_spline` for fixed abscissae, weights, anchor and τ; ``solve`` takes
    the rates and λ (and optionally another anchor), so bootstrap resamples reuse it.

    Variables: g(0), the decrements δ_k = g(t_{k−1}) − g(t_k) ≥ 0 (monotone by construction), the residual parts
    u⁺, u⁻ ≥ 0 and e_k ≥ |slope change at knot k|. Rows: g(x_j) + u⁺_j − u⁻_j = y_j; ±(slope change) ≤ e; g(1) ≥ 0.
    """

    def __init__(self, x: np.ndarray, w: np.ndarray | None = None, *, anchor: float | None = None,
                 tau: float = 0.5) -> None:  # fmt: skip
        from scipy import sparse

        if not 0.0 < tau < 1.0:
            raise ValueError(f"tau must be in (0, 1), got {tau}")
        x = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0)
        w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
        w = w / w.mean()
        self.knots = np.unique(np.r_[0.0, x, 1.0])
        self.at = np.searchsorted(self.knots, x)  # knot index of each point
        self.w, self.anchor, self.tau = w, anchor, tau
        k, n = len(self.knots), len(x)
        nd, ne = k - 1, k - 2
        self.shape = (nd, n, ne)
        h = np.diff(self.knots)
        rows = np.arange(ne)
        d = sparse.csr_matrix((np.r_[1 / h[:-1], -1 / h[1:]], (np.r_[rows, rows], np.r_[rows, rows + 1])), (ne, nd))
        lower = sparse.csr_matrix((np.arange(1, k)[None, :] <= self.at[:, None]).astype(np.float64))
        eye_n, eye_e = sparse.identity(n, format="csr"), sparse.identity(ne, format="csr")
        col0 = sparse.csr_matrix(np.ones((n, 1)))
        self.a_eq = sparse.hstack([col0, -lower, eye_n, -eye_n, sparse.csr_matrix((n, ne))], format="csr")
        zeros_e = sparse.csr_matrix((ne, 1))
        self.a_ub = sparse.vstack([
            sparse.hstack([zeros_e, d, sparse.csr_matrix((ne, 2 * n)), -eye_e]),
            sparse.hstack([zeros_e, -d, sparse.csr_matrix((ne, 2 * n)), -eye_e]),
            sparse.csr_matrix(np.r_[-1.0, np.ones(nd), np.zeros(2 * n + ne)][None, :]),
        ], format="csr")  # fmt: skip
        self.b_ub = np.zeros(2 * ne + 1)

    def fit(self, y: np.ndarray, lam: float | str = DEFAULT_LAMBDA) -> LinearSpline:
        """The fit at ``lam``, or at the λ of :data:`SIC_GRID` with the lowest SIC (ties: the smoother)."""
        if not isinstance(lam, str):
            return self.solve(y, float(lam))
        if lam != "sic":
            raise ValueError(f"lam must be a number or 'sic', got {lam!r}")
        return min((self.solve(y, float(v)) for v in SIC_GRID), key=lambda s: (self.sic(y, s), -s.lam))

    def solve(self, y: np.ndarray, lam: float, anchor: float | None = None) -> LinearSpline:
        """The fit at λ = ``lam`` (and another ``anchor`` than the problem's, for resamples)."""
        from scipy.optimize import linprog

        nd, n, ne = self.shape
        a = self.anchor if anchor is None else anchor
        c = np.r_[0.0, np.zeros(nd), self.w * self.tau / n, self.w * (1 - self.tau) / n, np.full(ne, lam)]
        bounds = np.zeros((len(c), 2))
        bounds[:, 1] = np.inf
        bounds[0] = (0.0, 1.0) if a is None else (float(np.clip(a, 0.0, 1.0)),) * 2
        res = linprog(c, A_ub=self.a_ub, b_ub=self.b_ub, A_eq=self.a_eq, b_eq=y, bounds=bounds, method="highs")
        if res.status != 0:  # cannot happen for a feasible, bounded LP; kept as a clear failure
            raise RuntimeError(f"quantile spline LP failed: {res.message}")
        values = np.r_[res.x[0], res.x[0] - np.cumsum(res.x[1 : 1 + nd])]
        return LinearSpline(self.knots, np.clip(values, 0.0, 1.0), lam)

    def sic(self, y: np.ndarray, s: LinearSpline) -> float:
        """SIC(λ) = log(n⁻¹ Σ w̄ ρ_τ(r)) + ½ n⁻¹ p_λ log n (KNP94, §4), p_λ = points the fit interpolates."""
        r = y - s.values[self.at]
        loss = np.mean(self.w * r * (self.tau - (r < 0)))
        p = int((np.abs(r) <= ZERO_RESIDUAL).sum())
        n = len(y)
        return float(np.log(max(loss, 1e-12)) + 0.5 * p * np.log(n) / n)


@dataclass(frozen=True)
class MonotoneSpline:
    """A clamped cubic B-spline on [0, 1] with non-increasing coefficients (hence non-increasing), values clipped to
    [0, 1] when evaluated."""

    knots: np.ndarray
    coef: np.ndarray
    degree: int = 3

    def __call__(self, v: np.ndarray | float) -> np.ndarray:
        from scipy.interpolate import BSpline

        x = np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0)
        return np.clip(BSpline(self.knots, self.coef, self.degree, extrapolate=False)(x), 0.0, 1.0)

    def area(self) -> float:
        """∫₀¹ s(v) dv (trapezoid on a 1,001-point grid)."""
        grid = np.linspace(0.0, 1.0, 1001)
        return float(np.trapezoid(self(grid), grid))


def fit_monotone_spline(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    anchor: float | None = None,
    n_segments: int = 10,
    degree: int = 3,
    lam: float = 1e-4,
) -> MonotoneSpline:
    r"""Monotone (non-increasing) smoothing spline through points (x, y) with weights w.

    Minimises :math:`\sum_j \bar w_j (y_j - s(x_j))^2 + \lambda \int_0^1 s''(v)^2 dv` (weights normalised to mean
    1) over clamped cubic B-splines with ``n_segments`` equal knot intervals whose coefficients are non-increasing
    (c_0 ≥ c_1 ≥ …, which makes the spline non-increasing), as bounded least squares. With ``anchor``,
    s(0) = c_0 = anchor exactly. The penalty is zero for straight lines, which are reproduced exactly. NaN points are
    ignored; with no point left the curve is the constant anchor (or 0).
    """
    from scipy.interpolate import BSpline
    from scipy.optimize import lsq_linear

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    x, y, w = np.clip(x[ok], 0, 1), y[ok], w[ok]
    knots = np.r_[np.zeros(degree), np.linspace(0, 1, n_segments + 1), np.ones(degree)]
    k = n_segments + degree
    if len(x) == 0:
        return MonotoneSpline(knots, np.full(k, 0.0 if anchor is None else float(anchor)), degree)
    basis = BSpline.design_matrix(x, knots, degree).toarray()
    t = np.tril(-np.ones((k, k)))  # c = T @ [c0, d1, …, d_{k-1}]: c_i = c0 − Σ_{j≤i} d_j, d ≥ 0
    t[:, 0] = 1.0
    sw = np.sqrt(w / w.mean())
    a_data = sw[:, None] * (basis @ t)
    a_pen = np.sqrt(lam) * (_roughness(knots, degree) @ t)
    if anchor is not None:  # c0 fixed: move its column to the right-hand side (the penalty of a constant is 0)
        a = np.vstack([a_data[:, 1:], a_pen[:, 1:]])
        b = np.r_[sw * (y - float(anchor)), np.zeros(len(a_pen))]
        theta = np.r_[float(anchor), lsq_linear(a, b, bounds=(0.0, np.inf), method="bvls").x]
    else:
        a = np.vstack([a_data, a_pen])
        b = np.r_[sw * y, np.zeros(len(a_pen))]
        theta = lsq_linear(a, b, bounds=(np.r_[-np.inf, np.zeros(k - 1)], np.inf), method="bvls").x
    return MonotoneSpline(knots, t @ theta, degree)


def _roughness(knots: np.ndarray, degree: int, n: int = 400) -> np.ndarray:
    """L with ‖L c‖² ≈ ∫₀¹ s''(v)² dv (midpoint rule on ``n`` points)."""
    from scipy.interpolate import BSpline

    k = len(knots) - degree - 1
    v = (np.arange(n) + 0.5) / n
    d2 = np.stack([BSpline(knots, np.eye(k)[i], degree).derivative(2)(v) for i in range(k)], axis=1)
    return d2 / np.sqrt(n)


@dataclass(frozen=True)
class Band:
    """Pointwise (``lo``, ``hi``) and simultaneous (``simultaneous_lo``, ``simultaneous_hi``) ``level`` bands."""

    lo: np.ndarray
    hi: np.ndarray
    simultaneous_lo: np.ndarray
    simultaneous_hi: np.ndarray
    level: float


def bootstrap_band(
    refit: Callable[[np.ndarray, float | None], Callable[[np.ndarray], np.ndarray]],
    rate: np.ndarray,
    count: np.ndarray,
    grid: np.ndarray,
    *,
    anchor: float | None = None,
    anchor_n: int | None = None,
    level: float = 0.83,
    resamples: int = 100,
    seed: int = 0,
    key: str = "",
) -> Band:
    """``level`` confidence bands of a fitted curve on ``grid`` from ``resamples`` refits (``refit(rates, anchor)``).

    Each bin's rate k_j/n_j is redrawn from Beta(k_j + ½, n_j − k_j + ½), the Jeffreys posterior of a binomial
    rate: a smoothed resample of the bin's images (the plain resample Binomial(n_j, k_j/n_j)/n_j has no spread when
    all n_j images are right or all wrong, which would make bands of zero width there). An anchor measured on
    ``anchor_n`` images is redrawn the same way; without ``anchor_n`` it stays fixed. Pointwise band: the
    (1 ∓ level)/2 percentiles at each Δv. Simultaneous band: the narrowest band between order statistics m and
    B − 1 − m at every Δv that holds at least ``level`` of the B resampled curves entirely. The generator is seeded
    from (``seed``, ``key``): a band is deterministic, and two curves with different keys get independent draws."""
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    ok = np.isfinite(rate) & (count > 0)
    n = count[ok].astype(np.float64)
    k = np.round(rate[ok] * n)
    curves = np.empty((resamples, len(grid)))
    for b in range(resamples):
        y = np.full_like(rate, np.nan)
        y[ok] = rng.beta(k + 0.5, n - k + 0.5)
        a = anchor
        if anchor is not None and anchor_n:
            a = rng.beta(round(anchor * anchor_n) + 0.5, anchor_n - round(anchor * anchor_n) + 0.5)
        curves[b] = refit(y, a)(grid)
    q = 100 * (1 - level) / 2
    lo, hi = np.percentile(curves, [q, 100 - q], axis=0)
    ordered = np.sort(curves, axis=0)
    depth = np.full(resamples, resamples)  # per curve: the largest m whose band [m, B-1-m] holds it everywhere
    for j in range(len(grid)):
        le = np.searchsorted(ordered[:, j], curves[:, j], side="right")
        ge = resamples - np.searchsorted(ordered[:, j], curves[:, j], side="left")
        depth = np.minimum(depth, np.minimum(le, ge) - 1)
    m = int(np.sort(depth)[::-1][max(int(np.ceil(level * resamples)) - 1, 0)])
    return Band(lo, hi, ordered[m], ordered[resamples - 1 - m], level)
