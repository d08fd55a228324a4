"""The VCR curve estimator: a monotone (non-increasing), anchored quantile smoothing spline.

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

One answer: among tied optimal curves the one closest to the rates (:mod:`.vcr_lp`). Bands: :mod:`.vcr_bands`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import CorruptgenError

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
    support: tuple[float, float] = (0.0, 1.0),
    method: str = "highs",
) -> LinearSpline:
    """Monotone (non-increasing) quantile smoothing spline of points (x, y) on [0, 1] with weights w.

    Minimises the KNP94 objective of the module docstring over linear splines with knots at 0, every distinct x and
    1, subject to g non-increasing, 0 ≤ g ≤ 1 and, with ``anchor``, g(0) = anchor. ``lam`` is a number or ``"sic"``
    (Schwarz criterion over :data:`SIC_GRID`). Among tied optimal curves the one closest to the points is returned
    (:func:`.vcr_lp.tie_break`), whatever the HiGHS ``method`` or the order of the points. ``support`` = (lo, hi):
    the Δv range the data stand for; the curve is held flat beyond hi (and below lo when not anchored) instead of
    running on. NaN points are ignored; with none left the curve is the constant anchor (or 0). x, y (and w) must
    have the same length; the anchor must be None or a number in [0, 1].
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    if not x.shape == y.shape == w.shape:
        raise CorruptgenError(f"VCR spline: x, y and w must have one length each, got {x.size}, {y.size}, {w.size}")
    check_anchor(anchor)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    if not ok.any():
        return constant_curve(anchor)
    return QuantileSplineLP(x[ok], w[ok], anchor=anchor, tau=tau, support=support, method=method).fit(y[ok], lam)


def check_anchor(anchor: float | None) -> None:
    """A curve's anchor is None (free) or a number in [0, 1]; NaN is refused, not ignored."""
    if anchor is not None and not (isinstance(anchor, (int, float, np.floating)) and 0.0 <= float(anchor) <= 1.0):
        raise CorruptgenError(f"VCR anchor must be None or a number in [0, 1], got {anchor!r}")


class QuantileSplineLP:
    """The linear program of :func:`fit_quantile_spline` for fixed abscissae, weights, anchor and τ; ``solve`` takes
    the rates and λ (and optionally another anchor), so bootstrap resamples reuse it.

    Variables: g at the first knot, the decrements δ_k = g(t_{k−1}) − g(t_k) ≥ 0 (monotone by construction), the
    residual parts u⁺, u⁻ ≥ 0 and e_k ≥ |slope change at knot k|. Rows: g(x_j) + u⁺_j − u⁻_j = y_j; ±(slope change)
    ≤ e; g(last knot) ≥ 0. Knots: 0 (or ``support[0]`` without an anchor), every distinct x, ``support[1]``.
    """

    def __init__(self, x: np.ndarray, w: np.ndarray | None = None, *, anchor: float | None = None, tau: float = 0.5,
                 support: tuple[float, float] = (0.0, 1.0), method: str = "highs") -> None:  # fmt: skip
        from scipy import sparse

        if not 0.0 < tau < 1.0:
            raise ValueError(f"tau must be in (0, 1), got {tau}")
        lo, hi = (float(v) for v in support)
        lo = 0.0 if anchor is not None else lo
        x = np.clip(np.asarray(x, dtype=np.float64), lo, hi)
        w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
        w = w / w.mean()
        self.knots = np.unique(np.r_[lo, x, hi])
        self.at = np.searchsorted(self.knots, x)  # knot index of each point
        self.w, self.anchor, self.tau, self.method = w, anchor, tau, method
        self.bounds0 = (0.0, 1.0) if anchor is None else (float(anchor),) * 2
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

    def cost(self, lam: float) -> np.ndarray:
        """The LP's objective vector at λ = ``lam``."""
        nd, n, ne = self.shape
        return np.r_[0.0, np.zeros(nd), self.w * self.tau / n, self.w * (1 - self.tau) / n, np.full(ne, lam)]

    def first_bounds(self, anchor: float | None = None) -> tuple[float, float]:
        """Bounds of g at the first knot: the problem's, or fixed at another ``anchor`` (a resample's)."""
        if anchor is None or self.anchor is None:
            return self.bounds0
        return (float(np.clip(anchor, 0.0, 1.0)),) * 2

    def solve(self, y: np.ndarray, lam: float, anchor: float | None = None, *, method: str | None = None,
              tie_break: bool = True) -> LinearSpline:  # fmt: skip
        """The fit at λ = ``lam`` (and another ``anchor`` than the problem's, for resamples); with ``tie_break`` the
        optimal curve closest to the rates (:func:`.vcr_lp.tie_break`), else the solver's vertex."""
        from scipy.optimize import linprog

        from .vcr_lp import tie_break as closest

        c = self.cost(lam)
        bounds = np.zeros((len(c), 2))
        bounds[:, 1] = np.inf
        bounds[0] = self.first_bounds(anchor)
        y = np.asarray(y, dtype=np.float64)
        res = linprog(c, A_ub=self.a_ub, b_ub=self.b_ub, A_eq=self.a_eq, b_eq=y, bounds=bounds,
                      method=method or self.method)  # fmt: skip
        if res.status != 0:  # cannot happen for a feasible, bounded LP; kept as a clear failure
            raise RuntimeError(f"quantile spline LP failed: {res.message}")
        if tie_break:
            values = closest(self, res, y, lam, (float(bounds[0, 0]), float(bounds[0, 1])))
        else:
            values = np.r_[res.x[0], res.x[0] - np.cumsum(res.x[1 : 1 + self.shape[0]])]
        return self.curve(np.clip(values, 0.0, 1.0), lam)

    def curve(self, values: np.ndarray, lam: float) -> LinearSpline:
        """The spline on [0, 1]: the knot values, held flat from the last knot to 1 (and from 0 to the first)."""
        knots = self.knots
        if knots[0] > 0.0:
            knots, values = np.r_[0.0, knots], np.r_[values[0], values]
        if knots[-1] < 1.0:
            knots, values = np.r_[knots, 1.0], np.r_[values, values[-1]]
        return LinearSpline(knots, values, lam)

    def sic(self, y: np.ndarray, s: LinearSpline) -> float:
        """SIC(λ) = log(n⁻¹ Σ w̄ ρ_τ(r)) + ½ n⁻¹ p_λ log n (KNP94, §4), p_λ = points the fit interpolates."""
        r = y - s(self.knots)[self.at]
        loss = np.mean(self.w * r * (self.tau - (r < 0)))
        p = int((np.abs(r) <= ZERO_RESIDUAL).sum())
        n = len(y)
        return float(np.log(max(loss, 1e-12)) + 0.5 * p * np.log(n) / n)


@dataclass(frozen=True)
class MonotoneSpline:
    """A clamped cubic B-spline on [0, 1] with non-increasing coefficients (hence non-increasing), values clipped to
    [0, 1] when evaluated, and held flat outside [``lo``, ``hi``] (the Δv range of its data)."""

    knots: np.ndarray
    coef: np.ndarray
    degree: int = 3
    lo: float = 0.0
    hi: float = 1.0

    def __call__(self, v: np.ndarray | float) -> np.ndarray:
        from scipy.interpolate import BSpline

        x = np.clip(np.asarray(v, dtype=np.float64), self.lo, self.hi)
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
    support: tuple[float, float] = (0.0, 1.0),
) -> MonotoneSpline:
    r"""Monotone (non-increasing) smoothing spline through points (x, y) with weights w.

    Minimises :math:`\sum_j \bar w_j (y_j - s(x_j))^2 + \lambda \int_0^1 s''(v)^2 dv` (weights normalised to mean
    1) over clamped cubic B-splines with ``n_segments`` equal knot intervals whose coefficients are non-increasing
    (c_0 ≥ c_1 ≥ …, which makes the spline non-increasing), as bounded least squares. With ``anchor``,
    s(0) = c_0 = anchor exactly. The penalty is zero for straight lines, which are reproduced exactly. NaN points are
    ignored; with no point left the curve is the constant anchor (or 0). The curve is held flat beyond ``support``
    (below it only without an anchor).
    """
    from scipy.interpolate import BSpline
    from scipy.optimize import lsq_linear

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    x, y, w = np.clip(x[ok], 0, 1), y[ok], w[ok]
    knots = np.r_[np.zeros(degree), np.linspace(0, 1, n_segments + 1), np.ones(degree)]
    k = n_segments + degree
    hold = (0.0 if anchor is not None else float(support[0]), float(support[1]))
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
    return MonotoneSpline(knots, t @ theta, degree, *hold)


def _roughness(knots: np.ndarray, degree: int, n: int = 400) -> np.ndarray:
    """L with ‖L c‖² ≈ ∫₀¹ s''(v)² dv (midpoint rule on ``n`` points)."""
    from scipy.interpolate import BSpline

    k = len(knots) - degree - 1
    v = (np.arange(n) + 0.5) / n
    d2 = np.stack([BSpline(knots, np.eye(k)[i], degree).derivative(2)(v) for i in range(k)], axis=1)
    return d2 / np.sqrt(n)
