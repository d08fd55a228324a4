"""Solving the quantile-spline linear program of :mod:`.vcr_spline`: one answer among tied optima, and cheap refits.

**One answer.** The LP can have many optimal curves (an L1 fit through a flat piece whose points weigh the same above
and below is optimal at any level between them), and which vertex a solver returns depends on its path (row order,
simplex or interior point). :func:`tie_break` returns the one optimal curve closest to the bin rates: the optimal
face is read off the solver's duals (complementary slackness: a variable with a positive reduced cost is 0 on every
optimal solution, an inequality with a non-zero dual is active on every one), written as linear constraints on the
curve's knot values, and the weighted least-squares projection of the rates onto it is a least-distance problem
solved exactly by non-negative least squares (Lawson & Hanson, *Solving Least Squares Problems*, 1974, ch. 23).
The projection is unique (strictly convex objective), so R̂ does not depend on the solver's path.

**Refits.** The bootstrap refits the same LP with other rates (right-hand sides) and anchors (a bound): the previous
optimal basis stays dual feasible, so HiGHS' dual simplex restarts from it in a few pivots (:class:`Refitter`, through
the HiGHS bindings that scipy ships, ``scipy.optimize._highspy``); where they are missing it calls
``scipy.optimize.linprog`` from scratch (same optima, ≈ 5× the cost).
"""

from __future__ import annotations

from typing import Any

import numpy as np

QuantileSplineLP = Any  # .vcr_spline.QuantileSplineLP (not imported: that module calls this one)
LinearSpline = Any

DUAL_TOL = 1e-9  # a reduced cost or dual above this (relative to the largest cost) is taken as non-zero


def objective(lp: QuantileSplineLP, y: np.ndarray, values: np.ndarray, lam: float) -> float:
    """The LP objective of the curve with knot ``values``: mean weighted check loss + λ · total slope change."""
    r = y - values[lp.at]
    loss = float(np.sum(lp.w * r * (lp.tau - (r < 0)))) / len(y)
    slopes = np.diff(values) / np.diff(lp.knots)
    return loss + lam * float(np.abs(np.diff(slopes)).sum())


def tie_break(lp: QuantileSplineLP, res: Any, y: np.ndarray, lam: float, first: tuple[float, float]) -> np.ndarray:
    """Knot values of the optimal curve closest to the rates (weighted least squares), given ``res``, an optimal
    ``linprog`` result with its duals and ``first`` the bounds of g at the first knot it was solved with; the
    solver's own vertex if the face cannot be read (checked by the objective)."""
    nd, n, ne = lp.shape
    k = nd + 1
    vertex = np.r_[res.x[0], res.x[0] - np.cumsum(res.x[1:k])]
    scale = max(1.0, float(np.max(np.abs(lp.w))) / n, lam)
    tol = DUAL_TOL * scale
    rc_lo, rc_hi = np.asarray(res.lower.marginals), np.asarray(res.upper.marginals)
    dual = np.asarray(res.ineqlin.marginals)
    h = np.diff(lp.knots)
    dslope = np.zeros((ne, k))  # slope change at interior knot i+1, as a function of phi
    for i in range(ne):
        dslope[i, i : i + 3] = [1 / h[i], -1 / h[i] - 1 / h[i + 1], 1 / h[i + 1]]
    eq, ge = [], []  # rows (a, b): a @ phi == b, a @ phi >= b

    def unit(i: int) -> np.ndarray:
        return np.eye(k)[i]

    lo0, hi0 = first
    if lo0 == hi0 or rc_lo[0] > tol or rc_hi[0] < -tol:
        eq.append((unit(0), float(res.x[0])))
    else:
        ge += [(unit(0), lo0), (-unit(0), -hi0)]
    for i in range(nd):  # decrement i = phi_i - phi_{i+1} >= 0, = 0 when its reduced cost is positive
        (eq if rc_lo[1 + i] > tol else ge).append((unit(i) - unit(i + 1), 0.0))
    for j in range(n):  # residual y_j - phi_at: u+ priced out -> phi_at >= y_j; u- priced out -> phi_at <= y_j
        up, um = rc_lo[k + j] > tol, rc_lo[k + n + j] > tol
        row = unit(lp.at[j])
        if up and um:
            eq.append((row, float(y[j])))
        elif up:
            ge.append((row, float(y[j])))
        elif um:
            ge.append((-row, -float(y[j])))
    for i in range(ne):  # slope change s_i: 0, >= 0 or <= 0 as its penalty term e_i and rows say
        plus, minus = abs(dual[i]) > tol, abs(dual[ne + i]) > tol
        if rc_lo[k + 2 * n + i] > tol or (plus and minus):
            eq.append((dslope[i], 0.0))
        elif plus:
            ge.append((dslope[i], 0.0))
        elif minus:
            ge.append((-dslope[i], 0.0))
    (eq if abs(dual[2 * ne]) > tol else ge).append((unit(k - 1), 0.0))  # g(end) >= 0
    target, omega = _targets(lp, y)
    inv = 1 / np.sqrt(omega)  # phi = target + inv * psi: min |psi|
    psi_v = (vertex - target) / inv
    if eq:
        a_eq = np.array([a for a, _ in eq]) * inv
        basis = _null_space(a_eq)
    else:
        basis = np.eye(k)
    psi = psi_v - basis @ (basis.T @ psi_v)  # the least-norm point of the equalities
    if basis.shape[1] and ge:
        a_ge = np.array([a for a, _ in ge])
        b_ge = np.array([b for _, b in ge]) - a_ge @ target - (a_ge * inv) @ psi
        psi = psi + basis @ _least_distance((a_ge * inv) @ basis, b_ge)
    phi = target + inv * psi
    if not np.all(np.isfinite(phi)) or objective(lp, y, phi, lam) > objective(lp, y, vertex, lam) + 1e-9 * scale:
        return vertex
    return phi


def _null_space(a: np.ndarray) -> np.ndarray:
    """An orthonormal basis of {x : a x = 0}, from a column-pivoted QR of aᵀ (an SVD costs ~1,000× more CPU here
    once BLAS threads compete for a loaded machine)."""
    from scipy.linalg import qr

    q, r, _ = qr(a.T, pivoting=True, mode="full")
    d = np.abs(np.diag(r))
    rank = int((d > 1e-10 * d[0]).sum()) if d.size and d[0] > 0 else 0
    return q[:, rank:]


def _targets(lp: QuantileSplineLP, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per knot: the weighted mean rate of its points and their total weight; a knot without points takes the
    rate of the nearest knot with points and the smallest weight."""
    k = len(lp.knots)
    omega = np.bincount(lp.at, weights=lp.w, minlength=k)
    sums = np.bincount(lp.at, weights=lp.w * y, minlength=k)
    has = omega > 0
    idx = np.flatnonzero(has)
    near = idx[np.abs(lp.knots[:, None] - lp.knots[idx][None, :]).argmin(axis=1)]
    target = sums[near] / omega[near]
    omega = np.where(has, omega, omega[has].min())
    return target, omega


def _least_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """argmin |x| subject to a @ x >= b (Lawson & Hanson's LDP through one NNLS); 0 when 0 is feasible."""
    from scipy.optimize import nnls

    norm = np.linalg.norm(a, axis=1)
    keep = norm > 1e-12  # rows constant on the face hold at the solver's point already
    a, b = a[keep] / norm[keep, None], b[keep] / norm[keep]
    if np.all(b <= 1e-12):
        return np.zeros(a.shape[1])
    g = np.vstack([a.T, b[None, :]])
    e = np.zeros(a.shape[1] + 1)
    e[-1] = 1.0
    u, _ = nnls(g, e, maxiter=50 * g.shape[1] + 100)
    r = g @ u - e
    if abs(r[-1]) < 1e-14:
        return np.zeros(a.shape[1])  # infeasible (cannot happen on a non-empty face): keep the equality point
    return -r[:-1] / r[-1]


class Refitter:
    """Solves one quantile-spline LP again with other rates ``y`` and anchor (no tie-break): HiGHS hot
    started from the previous basis (scipy's bundled bindings), or ``linprog`` where those are not available."""

    def __init__(self, lp: QuantileSplineLP, lam: float, method: str = "highs") -> None:
        self.lp, self.lam, self.method = lp, float(lam), method
        self.highs = _highs_model(lp, self.lam)

    def __call__(self, y: np.ndarray, anchor: float | None = None) -> LinearSpline:
        lp, h = self.lp, self.highs
        if h is not None:
            core, model = h
            for j, v in enumerate(np.asarray(y, dtype=np.float64)):
                model.changeRowBounds(j, float(v), float(v))
            lo, hi = lp.first_bounds(anchor)
            model.changeColBounds(0, lo, hi)
            model.run()
            if model.getModelStatus() == core.HighsModelStatus.kOptimal:
                x = np.asarray(model.getSolution().col_value)
                values = np.r_[x[0], x[0] - np.cumsum(x[1 : lp.shape[0] + 1])]
                return lp.curve(np.clip(values, 0.0, 1.0), self.lam)
        return lp.solve(y, self.lam, anchor, method=self.method, tie_break=False)


def _highs_model(lp: QuantileSplineLP, lam: float):
    """(module, a HiGHS model of the LP without presolve) through ``scipy.optimize._highspy``, or None."""
    try:
        from scipy import sparse
        from scipy.optimize._highspy import _core as core

        n = lp.shape[1]
        cost = lp.cost(lam)
        a = sparse.vstack([lp.a_eq, lp.a_ub]).tocsc()
        inf = core.kHighsInf
        model_lp = core.HighsLp()
        model_lp.num_col_, model_lp.num_row_ = len(cost), a.shape[0]
        model_lp.col_cost_ = cost
        lower, upper = np.zeros(len(cost)), np.full(len(cost), inf)
        lower[0], upper[0] = lp.bounds0
        model_lp.col_lower_, model_lp.col_upper_ = lower, upper
        model_lp.row_lower_ = np.r_[np.zeros(n), np.full(lp.a_ub.shape[0], -inf)]
        model_lp.row_upper_ = np.r_[np.zeros(n), lp.b_ub]
        mat = model_lp.a_matrix_
        mat.format_ = core.MatrixFormat.kColwise
        mat.start_, mat.index_, mat.value_ = a.indptr, a.indices, a.data
        mat.num_col_, mat.num_row_ = len(cost), a.shape[0]
        model = core._Highs()
        for key, value in (("output_flag", False), ("presolve", "off"), ("solver", "simplex")):
            model.setOptionValue(key, value)
        model.passModel(model_lp)
        return core, model
    except Exception:  # scipy without the bindings (< 1.15) or another layout: linprog instead
        return None
