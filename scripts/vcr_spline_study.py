"""How the VCR curve estimators recover a known area, and what a fit costs (docs/vcr.md, "Estimating the curves").

Synthetic prediction tables: N images with Δv ~ U(0, 1), each right with probability f(Δv) for a known curve f
(five shapes: a late and an early human-like drop, a line, an exponential decay, a kink), binned into 40 bins
(L = 20) as Algorithm 1 does; ``--outliers K`` bins (drawn per table) are then made outliers: every image in them
wrong where f > ½, right elsewhere (a mislabelled or broken batch). The anchor is f(0). For each estimator the
table gives the mean and largest |R̂ − ∫f| over ``--tables`` tables per shape, and the share within 0.005.

Estimators: the least-squares spline (λ = 1e-4, the previous default), the quantile spline at each λ of a grid, and
the quantile spline with λ chosen by SIC. Then the cost of one fit (quantile spline at the default λ, by SIC, least
squares) and of one curve with its bands (the default resamples), timed with ``corruptgen.bench.timing.time_work``
(median of 3 runs, CPU-s); and the bootstrap refits alone, hot-started HiGHS (what ``vcr_curve`` uses) against
``linprog`` from scratch for every resample (the same optima), in the same run.

    python scripts/vcr_spline_study.py --images 40000 --outliers 3 --tables 10
    python scripts/vcr_spline_study.py --tables 0          # timing only
"""

from __future__ import annotations

import argparse

import numpy as np

from corruptgen.bench.timing import time_work
from corruptgen.eval.metrics.vcr import PLOT_GRID, VCRSettings, bin_performance, fit_curve, vcr_curve
from corruptgen.eval.metrics.vcr_bands import bootstrap_curves
from corruptgen.eval.metrics.vcr_lp import Refitter
from corruptgen.eval.metrics.vcr_spline import DEFAULT_LAMBDA, QuantileSplineLP

SHAPES = {
    "late drop": lambda v: 0.95 / (1 + np.exp((v - 0.85) / 0.03)),
    "early drop": lambda v: 0.75 / (1 + np.exp((v - 0.4) / 0.1)),
    "line": lambda v: 0.75 * (1 - v),
    "exponential": lambda v: 0.7 * np.exp(-3 * v),
    "kink": lambda v: np.clip(np.where(v < 0.5, 0.9, 0.9 - 1.8 * (v - 0.5)), 0, 1),
}
GRID = np.linspace(0, 1, 100_001)


def synthetic_table(f, images: int, outliers: int, rng: np.random.Generator, bins: int = 40):
    """(Δv, correct) of ``images`` images on the curve ``f``, with ``outliers`` outlier bins."""
    dv = rng.uniform(0, 1, images)
    correct = rng.uniform(0, 1, images) < f(dv)
    for j in rng.choice(bins, outliers, replace=False):
        inside = (dv * bins).astype(int) == j
        correct[inside] = f((j + 0.5) / bins) <= 0.5
    return dv, correct


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=8000)
    ap.add_argument("--outliers", type=int, default=3)
    ap.add_argument("--tables", type=int, default=10, help="tables per shape")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-timing", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    estimators = {"least squares (λ 1e-4)": VCRSettings(spline="least-squares", band_resamples=0)}
    for lam in (1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2):
        estimators[f"quantile λ {lam:g}"] = VCRSettings(lam=lam, band_resamples=0)
    estimators["quantile, λ by SIC"] = VCRSettings(lam="sic", band_resamples=0)
    errors: dict[str, list[float]] = {name: [] for name in estimators}
    for f in SHAPES.values():
        truth = float(np.trapezoid(f(GRID), GRID))
        for _ in range(args.tables):
            dv, correct = synthetic_table(f, args.images, args.outliers, rng)
            x, rate, count = bin_performance(dv, correct)
            for name, s in estimators.items():
                errors[name].append(fit_curve(x, rate, count, float(f(0.0)), s)[0].area() - truth)
    if args.tables:
        print(
            f"{args.images} images, 40 bins, {args.outliers} outlier bins, {args.tables} tables x {len(SHAPES)} shapes"
        )
        print("| estimator | mean abs(R̂ − R) | max | within 0.005 |\n|---|---|---|---|")
    for name, e in errors.items() if args.tables else ():
        a = np.abs(e)
        print(f"| {name} | {a.mean():.4f} | {a.max():.4f} | {(a <= 0.005).mean():.0%} |")
    if args.no_timing:
        return
    dv, correct = synthetic_table(SHAPES["late drop"], args.images, args.outliers, rng)
    x, rate, count = bin_performance(dv, correct)
    b = VCRSettings().band_resamples
    print("\n| one fit (40 bins) | ms wall | ms CPU |\n|---|---|---|")
    for name, s in (("quantile, default λ", VCRSettings(band_resamples=0)),
                    ("quantile, λ by SIC (17 LPs)", VCRSettings(lam="sic", band_resamples=0)),
                    ("least squares", VCRSettings(spline="least-squares", band_resamples=0)),
                    (f"quantile + bands ({b} resamples)", VCRSettings()),
                    (f"least squares + bands ({b} resamples)", VCRSettings(spline="least-squares"))):  # fmt: skip
        t = time_work(lambda s=s: vcr_curve(dv, correct, 0.95, s, anchor_n=1000) and 1)
        print(f"| {name} | {1e3 * t['seconds'] / t['images']:.1f} | {1e3 * t['cpu_s_per_image']:.1f} |")
        if name.startswith("quantile + bands"):
            per = (t["seconds"] / t["images"], t["cpu_s_per_image"])
    print(f"| a 14-subset VCR evaluation: 28 curves with bands (28 × quantile + bands) | {28e3 * per[0]:,.0f} | "
          f"{28e3 * per[1]:,.0f} |")  # fmt: skip
    ok = np.isfinite(rate)
    lp = QuantileSplineLP(x[ok], np.sqrt(count[ok]), anchor=0.95)
    fit = lp.solve(rate[ok], DEFAULT_LAMBDA)(x[ok])

    def cold(y: np.ndarray, a: float | None):
        return lp.solve(y, DEFAULT_LAMBDA, a, tie_break=False)

    for name, refit in (("hot-started HiGHS", Refitter(lp, DEFAULT_LAMBDA)), ("linprog from scratch", cold)):
        t = time_work(lambda r=refit: len(bootstrap_curves(r, fit, count[ok], PLOT_GRID, anchor=0.95, anchor_n=1000,
                                                            resamples=b)))  # fmt: skip
        print(f"| {b} bootstrap refits, {name} | {1e3 * t['seconds'] * b / t['images']:.1f} | "
              f"{1e3 * t['cpu_s_per_image'] * b:.1f} |")  # fmt: skip
    print("(median of 3 runs of >= 0.5 s; HiGHS dual simplex, scipy.optimize.linprog and scipy's bundled HiGHS)")


if __name__ == "__main__":
    main()
