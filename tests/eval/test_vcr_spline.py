"""VCR curve estimation: the monotone anchored quantile smoothing spline (Koenker, Ng & Portnoy 1994) against least
squares on curves with outlier bins, λ by SIC, the bootstrap bands, and the settings recorded with every curve."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.eval.analyze_vcr import add_vcr_flags, vcr_settings
from corruptgen.eval.metrics import vcr
from corruptgen.eval.metrics.vcr_spline import SIC_GRID, fit_quantile_spline

X = (np.arange(40) + 0.5) / 40
FINE = np.linspace(0, 1, 100_001)


def known(v):
    """A human-like curve: flat, then a drop around Δv = 0.6."""
    return 0.9 / (1 + np.exp((np.asarray(v) - 0.6) / 0.08))


def table_with_outliers(n: int, outlier_bins: tuple[int, ...], seed: int = 0):
    """(Δv, correct) of n images on ``known``; every image of ``outlier_bins`` is wrong (a broken batch)."""
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    correct = rng.uniform(0, 1, n) < known(dv)
    correct[np.isin((dv * 40).astype(int), outlier_bins)] = False
    return dv, correct


def test_quantile_spline_is_exact_on_a_line_and_monotone_anchored():
    s = fit_quantile_spline(X, 0.9 - 0.6 * X, anchor=0.9)
    assert np.allclose(s(FINE), 0.9 - 0.6 * FINE, atol=1e-9) and s.area() == pytest.approx(0.6, abs=1e-9)
    y = known(X) + np.random.default_rng(1).normal(0, 0.03, 40)
    y[[3, 30]] = [0.1, 0.95]  # outliers against the trend
    s = fit_quantile_spline(X, y, np.full(40, 50.0), anchor=0.9)
    vals = s(FINE)
    assert vals[0] == pytest.approx(0.9) and np.all(np.diff(vals) <= 1e-12) and vals.min() >= 0
    assert fit_quantile_spline([], [], anchor=0.7).area() == pytest.approx(0.7)
    # unanchored, increasing data: the best monotone median fit is flat between the two values
    flat = fit_quantile_spline([0.25, 0.75], [0.2, 0.9])
    assert np.ptp(flat(np.linspace(0, 1, 11))) < 1e-9 and 0.2 <= flat(0.5) <= 0.9


def test_outlier_bins_move_least_squares_but_not_the_quantile_spline():
    """Isolated outlier bins (every image wrong) in a 200,000-image table on a known curve: R̂ of the quantile
    spline stays within 0.005 of the true area, least squares' does not."""
    truth = float(np.trapezoid(known(FINE), FINE))
    dv, correct = table_with_outliers(200_000, (5, 14, 22))
    q = vcr.vcr_curve(dv, correct, float(known(0)), vcr.VCRSettings(band_resamples=0))
    ls = vcr.vcr_curve(dv, correct, float(known(0)), vcr.VCRSettings(spline="least-squares", band_resamples=0))
    assert abs(q["R"] - truth) < 0.005 < abs(ls["R"] - truth)
    assert q["spline"] == {"method": "quantile", "tau": 0.5, "lam_rule": "fixed", "weights": "sqrt(n_j)",
                           "lam": 3e-4}  # fmt: skip
    assert ls["spline"]["method"] == "least-squares" and ls["spline"]["lam"] == 1e-4
    # without outliers both recover the area
    dv, correct = table_with_outliers(200_000, ())
    for s in (vcr.VCRSettings(band_resamples=0), vcr.VCRSettings(spline="least-squares", band_resamples=0)):
        assert vcr.vcr_curve(dv, correct, float(known(0)), s)["R"] == pytest.approx(truth, abs=0.005)


def test_lambda_by_sic_is_on_the_grid_and_recorded():
    dv, correct = table_with_outliers(20_000, (10,), seed=2)
    c = vcr.vcr_curve(dv, correct, float(known(0)), vcr.VCRSettings(lam="sic", band_resamples=0))
    assert c["spline"]["lam_rule"] == "sic" and c["spline"]["lam"] in SIC_GRID
    with pytest.raises(CorruptgenError, match="'sic' for the quantile spline"):
        vcr.VCRSettings(spline="least-squares", lam="sic")


def test_bands_are_deterministic_centred_on_the_fit_and_sup_t_simultaneous():
    dv, correct = table_with_outliers(8_000, (), seed=3)
    s = vcr.VCRSettings(band_resamples=60, band_bias_aware=False)  # the plain sup-t band (auto: bias-aware at 8,000)
    c = vcr.vcr_curve(dv, correct, 0.9, s, anchor_n=500, key="x/a")
    again = vcr.vcr_curve(dv, correct, 0.9, s, anchor_n=500, key="x/a")
    other = vcr.vcr_curve(dv, correct, 0.9, s, anchor_n=500, key="y/a")
    band, grid = c["band"], np.array(c["grid"])
    assert band == again["band"] and band != other["band"]  # fixed seed per curve key
    lo, hi, se = np.array(band["lo"]), np.array(band["hi"]), np.array(band["se"])
    slo, shi, q = np.array(band["simultaneous"]["lo"]), np.array(band["simultaneous"]["hi"]), band["simultaneous"]["q"]
    assert band["level"] == 0.83 and band["resamples"] == 60 and band["anchor_resampled"]
    z = 1.3722  # the normal quantile of 0.915: the pointwise band is the fit ± z se (clipped to [0, 1])
    assert np.allclose(hi, np.clip(grid + z * se, 0, 1), atol=2e-6) and np.allclose(lo, np.clip(grid - z * se, 0, 1),
                                                                                      atol=2e-6)  # fmt: skip
    assert q > z and np.allclose(shi, np.clip(grid + q * se, 0, 1), atol=2e-6)  # sup-t: wider than pointwise
    assert np.all(slo <= lo + 1e-12) and np.all(hi <= shi + 1e-12)
    assert se[0] > 0  # the anchor (clean accuracy on 500 images) is resampled too
    truth = known(vcr.PLOT_GRID)
    assert np.mean((slo <= truth + 0.01) & (truth <= shi + 0.01)) > 0.9
    # a fixed anchor (consistency of a deterministic model) stays fixed; bins all right keep a spread (Jeffreys)
    ones = vcr.vcr_curve(dv, np.ones_like(correct), 1.0, s, key="p")
    assert ones["band"]["lo"][0] == ones["band"]["hi"][0] == 1.0 and ones["band"]["lo"][50] < 1.0
    assert ones["band"]["se"][0] == 0.0 and ones["R"] == 1.0
    # bias-aware: the same refits, deviations from the fit (their offset added): never narrower than sup-t
    aware = vcr.vcr_curve(dv, correct, 0.9, vcr.VCRSettings(band_resamples=60, band_bias_aware=True), anchor_n=500,
                          key="x/a")["band"]  # fmt: skip
    assert aware["se"] == band["se"] and aware["simultaneous"]["q"] >= q and "bias-aware" in aware["method"]


def test_hot_started_refits_equal_cold_linprog_solves():
    """The bootstrap refits through HiGHS hot starts give the optima linprog gives from scratch."""
    from corruptgen.eval.metrics.vcr_lp import Refitter
    from corruptgen.eval.metrics.vcr_spline import QuantileSplineLP

    dv, correct = table_with_outliers(4_000, (), seed=4)
    x, rate, count = vcr.bin_performance(dv, correct)
    lp = QuantileSplineLP(x, np.sqrt(count), anchor=0.9)
    hot = Refitter(lp, 3e-4)
    assert hot.highs is not None  # scipy's bundled HiGHS bindings are there (scipy >= 1.15)
    rng = np.random.default_rng(0)
    for _ in range(20):
        y, a = rng.beta(rate * count + 0.5, (1 - rate) * count + 0.5), rng.uniform(0.85, 0.95)
        cold = lp.solve(y, 3e-4, a, tie_break=False)
        assert hot(y, a).area() == pytest.approx(cold.area(), abs=1e-9)


def test_vcr_metrics_record_the_estimator_and_the_cli_flags_choose_it():
    p = argparse.ArgumentParser()
    add_vcr_flags(p)
    s = vcr_settings(p.parse_args(["--vcr-spline", "least-squares", "--vcr-smoothing", "1e-3",
                                   "--vcr-band-resamples", "0"]))  # fmt: skip
    assert (s.spline, s.lam, s.band_resamples) == ("least-squares", 1e-3, 0)
    s = vcr_settings(p.parse_args(["--vcr-smoothing", "sic", "--vcr-tau", "0.4"]))
    assert (s.spline, s.lam, s.tau, s.band_resamples, s.min_support) == ("quantile", "sic", 0.4, 500, 0.5)
    assert vcr_settings(p.parse_args(["--vcr-min-support", "0.25"])).min_support == 0.25
    assert vcr_settings(p.parse_args([])).band_bias_aware == "auto"
    assert vcr_settings(p.parse_args(["--vcr-band-bias-aware"])).band_bias_aware is True
    assert vcr_settings(p.parse_args(["--vcr-band-bias-aware", "off"])).band_bias_aware is False
    with pytest.raises(SystemExit):
        p.parse_args(["--vcr-smoothing", "smooth"])
    with pytest.raises(CorruptgenError, match="tau"):
        vcr_settings(p.parse_args(["--vcr-tau", "1.5"]))


def test_bands_are_bias_aware_by_default_from_3000_images():
    """``band_bias_aware="auto"``: the plain sup-t band below :data:`AUTO_BIAS_AWARE_IMAGES` images in the used
    bins, the bias-aware one from it on (where the plain band's whole-curve coverage falls in the simulation)."""
    from corruptgen.eval.metrics.vcr_bands import AUTO_BIAS_AWARE_IMAGES, bias_aware_for

    assert AUTO_BIAS_AWARE_IMAGES == 3000
    assert not bias_aware_for("auto", 2999) and bias_aware_for("auto", 3000) and bias_aware_for(True, 10)
    assert not bias_aware_for(False, 10**6)
    s = vcr.VCRSettings(band_resamples=20)
    small, large = (table_with_outliers(n, (), seed=4) for n in (2_000, 4_000))
    a, b = (vcr.vcr_curve(dv, ok, 0.9, s, key="k")["band"] for dv, ok in (small, large))
    assert a["bias_aware"] is False and "bias-aware" not in a["method"]
    assert b["bias_aware"] is True and "bias-aware" in b["method"]
    with pytest.raises(CorruptgenError, match="band_bias_aware"):
        vcr.VCRSettings(band_bias_aware="yes")
