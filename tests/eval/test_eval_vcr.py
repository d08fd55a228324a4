"""VCR: bins, the anchored monotone spline and its area, HMRI / MRSI, coverage, human data, the 16 classes."""

from __future__ import annotations

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.eval.metrics import vcr
from corruptgen.eval.predictions import build_predictions


def test_bins_and_minimum_count_by_hand():
    dv = np.array([0.01, 0.02, 0.5, 0.51, 0.99, np.nan])
    correct = np.array([1, 0, 1, 1, 0, 1])
    x, rate, count = vcr.bin_performance(dv, correct, n_bins=4, min_count=2)
    # bins of width 0.25: 0.01, 0.02 -> 0; 0.5, 0.51 -> 2; 0.99 -> 3 (one image < L = 2: missing); NaN ignored
    assert count.tolist() == [2, 0, 2, 1] and x.tolist() == [0.125, 0.375, 0.625, 0.875]
    assert rate[0] == 0.5 and rate[2] == 1.0 and np.isnan(rate[1]) and np.isnan(rate[3])
    # coverage: bins holding >= 2 images: 0 and 2 of 4
    assert vcr.coverage(dv, n_bins=4, min_count=2) == 0.5
    assert vcr.bin_index(np.array([-0.2, 1.0, 1.3]), 40).tolist() == [0, 39, 39]


def test_spline_reproduces_a_line_and_its_area_is_the_trapezoid():
    x = (np.arange(40) + 0.5) / 40
    y = 0.9 - 0.6 * x
    s = vcr.fit_monotone_spline(x, y, np.full(40, 25.0), anchor=0.9)
    grid = np.linspace(0, 1, 2001)
    assert np.allclose(s(grid), 0.9 - 0.6 * grid, atol=1e-6)
    assert s.area() == pytest.approx(np.trapezoid(0.9 - 0.6 * grid, grid), abs=1e-6)  # = 0.6


def test_spline_is_monotone_anchored_and_matches_a_known_curve():
    def known(v):
        return 0.9 / (1 + np.exp((v - 0.6) / 0.08))

    rng = np.random.default_rng(0)
    x = (np.arange(40) + 0.5) / 40
    counts = rng.integers(20, 60, size=40)
    y = np.clip(known(x) + rng.normal(0, 0.5 / np.sqrt(counts)) * np.sqrt(known(x) * (1 - known(x))), 0, 1)
    y[[5, 17]] = np.nan  # bins under L
    s = vcr.fit_monotone_spline(x, y, counts, anchor=known(0.0))
    grid = np.linspace(0, 1, 4001)
    vals = s(grid)
    assert np.all(np.diff(vals) <= 1e-12)  # non-increasing
    assert vals[0] == pytest.approx(known(0.0), abs=1e-9)  # anchored at clean performance
    assert s.area() == pytest.approx(np.trapezoid(known(grid), grid), abs=0.015)
    noiseless = vcr.fit_monotone_spline(x, known(x), counts, anchor=known(0.0), lam=1e-7)
    assert noiseless.area() == pytest.approx(np.trapezoid(known(grid), grid), abs=2e-3)


def test_spline_without_anchor_or_data():
    s = vcr.fit_monotone_spline([0.25, 0.75], [0.2, 0.9], anchor=None)  # increasing data: best monotone fit is flat
    assert np.allclose(s(np.linspace(0, 1, 11)), 0.55, atol=1e-6)
    empty = vcr.fit_monotone_spline([], [], anchor=0.7)
    assert empty.area() == pytest.approx(0.7)


def test_hmri_mrsi_by_hand():
    g = np.linspace(0, 1, 1001)
    human = 1 - g
    # model below humans everywhere: m - h = -0.2 + 0.2 v; A^{h>m} = 0.1, A_h = 0.5 -> HMRI 0.8, MRSI 0
    out = vcr.compare_curves(0.8 - 0.8 * g, human, g)
    assert out["hmri"] == pytest.approx(0.8) and out["mrsi"] == pytest.approx(0.0)
    # crossing at 0.5: A^{h>m} = A^{m>h} = 0.125, A_h = A_m = 0.5 -> HMRI 0.75, MRSI 0.25
    out = vcr.compare_curves(np.full_like(g, 0.5), human, g)
    assert out["hmri"] == pytest.approx(0.75) and out["mrsi"] == pytest.approx(0.25)
    assert out["A_h>m"] == pytest.approx(0.125) and out["A_m"] == pytest.approx(0.5)


def test_sixteen_class_mapping():
    idx = [i for v in vcr.SIXTEEN_CLASSES.values() for i in v]
    assert len(idx) == 207 and len(set(idx)) == 207 and len(vcr.SIXTEEN_CLASSES) == 16
    assert vcr.map_to_16([285, 409, 967, 404]).tolist() == ["cat", "clock", None, "airplane"]
    probs = np.full((2, 1000), 1e-4)
    probs[0, 152:190] = 0.02  # dog mass spread over many classes
    probs[0, 404] = 0.3  # one strong airplane class: argmax says airplane, mean-probability says airplane too
    probs[1, 285] = 0.05
    probs[1, 160] = 0.06  # argmax: dog (160) but cat has the higher mean over its 6 classes? no: 0.05/6 vs 0.06/109
    assert vcr.probs_to_16(probs).tolist() == ["airplane", "cat"]


def test_human_csv_loader(tmp_path):
    p = tmp_path / "human.csv"
    p.write_text(
        "transformation,vd_score,orig_pred,transformed_pred,label\n"
        "gaussian_noise,0.1,Cat,cat,cat\ngaussian_noise,-0.05,cat,dog,cat\ngaussian_blur,0.9,dog,dog,dog\n"
    )
    data = vcr.load_human_csv(p)
    assert set(data) == {"gaussian_noise", "gaussian_blur"}
    gn = data["gaussian_noise"]
    assert gn.delta_v.tolist() == [0.1, 0.0] and gn.orig_pred.tolist() == ["cat", "cat"]  # max(0, .), lower-case
    bad = tmp_path / "bad.csv"
    bad.write_text("vd_score,label\n0.1,cat\n")
    with pytest.raises(CorruptgenError, match="missing orig_pred, transf_pred"):
        vcr.load_human_csv(bad)


def _vcr_table():
    rows = {"subset": [], "key": [], "source_key": [], "frame": [], "label": [], "top5": [], "prob5": [],
            "delta_v": []}  # fmt: skip
    rng = np.random.default_rng(1)
    for i in range(4):  # clean: 3 of 4 right (label 285 = cat)
        for c, v in zip(rows, ("clean", f"s{i}", f"s{i}", 0, 285, [285 if i < 3 else 1, 0, 0, 0, 0], [0.2] * 5,
                                np.nan), strict=True):  # fmt: skip
            rows[c].append(v)
    for j in range(400):
        dv = rng.uniform()
        src = f"s{j % 4}"
        right = rng.uniform() < 1 - dv
        for c, v in zip(rows, ("noise", f"{src}_{j}", src, 0, 285, [285 if right else 2, 0, 0, 0, 0], [0.2] * 5, dv),
                        strict=True):  # fmt: skip
            rows[c].append(v)
    with16 = True
    rows["pred16"] = vcr.map_to_16(np.array(rows["top5"])[:, 0])
    rows["pred16_prob"] = rows["pred16"]
    return build_predictions(rows, {"clean": {}, "noise": {"corruption": "gaussian_noise"}}, {}, with16)


def test_vcr_metrics_anchor_curves_and_humans():
    pred = _vcr_table()
    s = vcr.VCRSettings(bins=10, min_per_bin=5, coverage_bins=10, coverage_min=20, band_resamples=10)
    out = vcr.vcr_metrics(pred, settings=s)
    e = out["subsets"]["noise"]
    assert e["curve_a"]["grid"][0] == pytest.approx(0.75)  # anchored at the clean accuracy (3 of 4)
    assert e["curve_p"]["grid"][0] == pytest.approx(1.0)  # consistency anchored at 1
    assert 0.4 < e["R_a"] < 0.65 and np.all(np.diff(e["curve_a"]["grid"]) <= 1e-9)
    assert e["coverage"] == 1.0 and sum(e["delta_v_hist"]) == 400
    human = vcr.HumanData(
        np.linspace(0, 1, 200),
        np.array(["cat"] * 200, dtype=object),
        np.array(["cat"] * 150 + ["dog"] * 50, dtype=object),
        np.array(["cat"] * 200, dtype=object),
    )
    out = vcr.vcr_metrics(pred, humans={"*": human}, settings=s)
    h = out["subsets"]["noise"]["human"]
    assert h["human_R_a"] == pytest.approx(0.75, abs=0.05)  # humans right up to Δv = 0.75
    assert 0 < h["hmri_a"] < 1 and h["mrsi_a"] is not None and h["label_space"] == "16-class (argmax)"
    fits: dict = {}  # kept across models (MetricOptions.human_fits): fitted once, the same results
    first = vcr.vcr_metrics(pred, humans={"*": human}, settings=s, human_fits=fits)
    assert len(fits) == 1 and first == out
    assert vcr.vcr_metrics(pred, humans={"*": human}, settings=s, human_fits=fits) == out and len(fits) == 1
