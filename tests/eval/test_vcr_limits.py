"""VCR estimates that know their limits: a refusal below the minimum support instead of the anchor, one answer among
tied LP optima, the rule beyond the data, notes when the data rise, and one-line errors for bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.eval.metrics import vcr
from corruptgen.eval.metrics.vcr_spline import QuantileSplineLP, fit_quantile_spline

FAST = vcr.VCRSettings(band_resamples=0)


def uniform_table(n: int, seed: int = 0, curve=lambda v: 0.9 - 0.6 * v):
    rng = np.random.default_rng(seed)
    dv = rng.uniform(0, 1, n)
    return dv, rng.uniform(0, 1, n) < curve(dv)


@pytest.mark.parametrize("n", [0, 200, 300])
def test_too_few_images_give_a_reason_not_the_anchor(n):
    """200 images in 40 bins hold no bin of 20: the old estimate was the anchor itself (R̂_a = clean accuracy,
    R̂_p = 1); now R̂ is None with the reason, and the curve records its (empty) support."""
    dv, correct = uniform_table(n)
    for anchor in (0.2, 1.0):
        c = vcr.vcr_curve(dv, correct, anchor, FAST)
        assert c["R"] is None and c["grid"] is None and c["band"] is None and c["R_bounds"] is None
        assert c["refused"] == "no images" if n == 0 else "0 of 40 Δv bins hold ≥ 20 images" in c["refused"]
        assert c["support"]["bins"] == [] and c["support"]["unsupported"] == [[0.0, 1.0]]


def test_all_nan_delta_v_and_the_support_threshold():
    c = vcr.vcr_curve(np.full(50, np.nan), np.ones(50, bool), 0.9, FAST)
    assert c["R"] is None and c["refused"] == "none of the 50 images has a finite Δv"
    dv, correct = uniform_table(4000)
    half = dv < 0.5  # 20 of 40 bins: exactly the default minimum support
    assert vcr.vcr_curve(dv[half], correct[half], 0.9, FAST)["R"] is not None
    c = vcr.vcr_curve(dv[half], correct[half], 0.9, vcr.VCRSettings(band_resamples=0, min_support=0.6))
    assert c["R"] is None and "20 of 40" in c["refused"] and "minimum support is 24 bins" in c["refused"]


def test_metrics_report_null_with_the_reason_and_one_line_per_subset():
    from test_eval_vcr import _vcr_table

    pred = _vcr_table()  # 400 noisy images, 4 clean
    human = vcr.HumanData(np.linspace(0, 1, 200), *(np.array(["cat"] * 200, dtype=object) for _ in range(3)))
    out = vcr.vcr_metrics(pred, humans={"*": human}, settings=FAST)  # 40 bins of 20: 400 images are too few
    e = out["subsets"]["noise"]
    assert e["R_a"] is None and e["R_p"] is None and e["curve_a"]["refused"] == e["refused"]["R_a"]
    h = e["human"]
    assert h["hmri_a"] is None and h["mrsi_p"] is None and "model curve: " in h["refused"]["hmri_a"]
    (line,) = vcr.refusals(out)
    assert line.startswith("VCR noise: R_a, R_p, hmri_a, mrsi_a, hmri_p, mrsi_p not estimated: ")
    ok = vcr.vcr_metrics(pred, settings=vcr.VCRSettings(bins=10, min_per_bin=5, band_resamples=0))
    assert ok["subsets"]["noise"]["R_a"] is not None and vcr.refusals(ok) == []


def test_one_answer_among_tied_optima_whatever_the_row_order_or_the_highs_method():
    """M = 10, L = 5, a consistency curve: the LP has several optimal curves (areas 0.629–0.667 among the vertices
    HiGHS returns); the tie-break returns one, for either row order and method."""
    rng = np.random.default_rng(108)
    dv = rng.uniform(0, 1, 120)
    consistent = rng.uniform(0, 1, 120) < 1 - 0.7 * dv
    x, rate, count = vcr.bin_performance(dv, consistent, n_bins=10, min_count=5)
    ok = np.isfinite(rate)
    x, y, w = x[ok], rate[ok], np.sqrt(count[ok])
    vertices, fits = [], []
    for method in ("highs-ds", "highs-ipm", "highs"):
        for p in (np.arange(len(x)), np.arange(len(x))[::-1], rng.permutation(len(x))):
            vertices.append(QuantileSplineLP(x[p], w[p], anchor=1.0).solve(y[p], 3e-4, method=method,
                                                                           tie_break=False).area())  # fmt: skip
            fits.append(fit_quantile_spline(x[p], y[p], w[p], anchor=1.0, method=method).area())
    assert np.ptp(vertices) > 0.03  # the tie is real
    assert np.ptp(fits) < 1e-9
    best = QuantileSplineLP(x, w, anchor=1.0)
    from corruptgen.eval.metrics.vcr_lp import objective

    vertex = best.solve(y, 3e-4, tie_break=False)(best.knots)
    closest = fit_quantile_spline(x, y, w, anchor=1.0)(best.knots)
    assert objective(best, y, closest, 3e-4) == pytest.approx(objective(best, y, vertex, 3e-4), abs=1e-12)  # optimal
    # through vcr_curve: the image rows shuffled and another method, the same R̂
    s = vcr.VCRSettings(bins=10, min_per_bin=5, band_resamples=0)
    order = rng.permutation(len(dv))
    r1 = vcr.vcr_curve(dv, consistent, 1.0, s)["R"]
    r2 = vcr.vcr_curve(dv[order], consistent[order], 1.0, vcr.VCRSettings(**{**s.__dict__, "lp_method": "highs-ipm"}))
    assert r1 == pytest.approx(r2["R"], abs=1e-9)


def test_beyond_the_last_usable_bin_the_curve_is_held_and_the_range_reported():
    dv, correct = uniform_table(8000, curve=lambda v: 0.9 - 0.8 * v)
    keep = dv < 0.7  # bins 0..27 usable: support [0, 0.7]
    c = vcr.vcr_curve(dv[keep], correct[keep], 0.9, vcr.VCRSettings(band_resamples=40))
    sup = c["support"]
    assert sup["range"] == [0.0, 0.7] and sup["unsupported"] == [[0.7, 1.0]] and sup["gaps"] == []
    grid = np.array(c["grid"])
    assert np.ptp(grid[70:]) == 0 and grid[70] == pytest.approx(0.9 - 0.8 * 0.7, abs=0.06)  # flat, not extended
    assert c["R"] == pytest.approx(np.trapezoid(grid, vcr.PLOT_GRID), abs=1e-4)
    lo, hi = c["R_bounds"]  # the unsupported part could be anything from 0 to the held value
    assert lo == pytest.approx(c["R"] - 0.3 * grid[70], abs=1e-6) and hi == pytest.approx(c["R"], abs=1e-12)
    band = c["band"]
    assert all(v == 0.0 for v in band["lo"][71:]) and all(v == band["hi"][70] for v in band["hi"][71:])
    assert all(v == 0.0 for v in band["simultaneous"]["lo"][71:])
    # a single Δv value: one bin, refused (1 of 40), not extended linearly
    assert vcr.vcr_curve(np.full(500, 0.5), np.ones(500, bool), 0.9, FAST)["refused"].startswith("1 of 40")
    # an unanchored curve with data from Δv = 0.3 on is held flat below it too
    up = vcr.vcr_curve(dv[dv > 0.3], correct[dv > 0.3], None, FAST)
    assert up["support"]["unsupported"] == [[0.0, 0.3]] and np.ptp(up["grid"][:31]) == 0
    assert up["R_bounds"][1] == pytest.approx(up["R"] + 0.3 * (1 - up["grid"][30]), abs=1e-6)


def test_a_note_when_the_data_rise_with_delta_v_or_lie_above_the_anchor():
    dv, correct = uniform_table(4000, curve=lambda v: 0.3 + 0.6 * v)
    c = vcr.vcr_curve(dv, correct, None, FAST)
    assert any(n.startswith("the bin rates rise with Δv") for n in c["notes"])
    flat = vcr.vcr_curve(*uniform_table(4000, curve=lambda v: 0.8 + 0 * v), 0.2, FAST, anchor_n=500)
    assert np.ptp(flat["grid"]) == 0 and flat["grid"][0] == 0.2  # the curve stays at its anchor ...
    assert any("lie above the anchor" in n for n in flat["notes"])  # ... and says why
    assert vcr.vcr_curve(*uniform_table(4000), 0.9, FAST)["notes"] == []


@pytest.mark.parametrize(("call", "message"), [
    (lambda: vcr.vcr_curve(np.zeros(10), np.ones(9, bool), 0.9), "10 Δv values but 9 outcomes"),
    (lambda: vcr.vcr_curve(np.zeros(10), np.ones(10, bool), float("nan")), "anchor must be None or a number"),
    (lambda: vcr.vcr_curve(np.zeros(10), np.ones(10, bool), 1.5), "anchor must be None or a number"),
    (lambda: fit_quantile_spline([0.1, 0.2], [0.5], anchor=0.9), "one length each"),
    (lambda: vcr.bin_performance(np.zeros(3), np.zeros(4)), "3 Δv values but 4 outcomes"),
    (lambda: vcr.VCRSettings(min_support=1.5), "minimum support"),
    (lambda: vcr.VCRSettings(lp_method="simplex"), "LP method"),
])  # fmt: skip
def test_bad_inputs_are_one_clear_error(call, message):
    with pytest.raises(CorruptgenError, match=message):
        call()
