"""Visually similar VCR corruption functions (Shen et al., WACV 2025, §4.4, Fig. 8, App. E.1): band overlap ranges,
verdicts and classes on synthetic tables with known curves (known-similar and known-different pairs, a model whose
curves differ only above Δv = 0.8), and on a real VCR build of the sample photos evaluated by a model."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from eval_helpers import fake_model

from corruptgen.cli import main
from corruptgen.errors import CorruptgenError
from corruptgen.eval.metrics.vcr import VCRSettings
from corruptgen.eval.vcr_similarity import classes, pair, runs, vcr_similarity


def late(v):
    return 0.95 / (1 + np.exp((v - 0.8) / 0.04))


def early(v):
    return 0.95 / (1 + np.exp((v - 0.45) / 0.06))


def write_table(path, curves, n, seed=0, model=None):
    """A toolbox CSV: ``n`` trials per function, Δv ~ U(0, 1), right with probability curve(Δv); 97 % right on the
    originals. With ``model`` a ``model`` column (the toolbox's eval_results.csv layout)."""
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["transformation", "vd_score", "orig_pred", "transf_pred", "label"] + (["model"] if model else []))
        for name, curve in curves.items():
            dv = rng.uniform(0, 1, n)
            orig = np.where(rng.uniform(0, 1, n) < 0.97, "cat", "dog")
            transf = np.where(rng.uniform(0, 1, n) < curve(dv), "cat", "dog")
            for row in zip(dv.round(5), orig, transf, strict=True):
                w.writerow([name, *row, "cat"] + ([model] if model else []))
    return path


def test_runs_and_classes_by_hand():
    grid = np.linspace(0, 1, 11)
    assert runs(np.array([1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1], bool), grid) == [[0.0, 0.1], [0.4, 0.4], [0.8, 1.0]]
    similar = {frozenset(p) for p in (("a", "b"), ("b", "c"), ("d", "e"))}  # a~b~c but a≁c: not transitive
    comps, cliques = classes(["a", "b", "c", "d", "e", "f"], similar)
    assert comps == [["a", "b", "c"], ["d", "e"], ["f"]] and cliques == [["a", "b"], ["b", "c"], ["d", "e"]]


def test_known_similar_and_known_different_human_functions_from_the_cli(tmp_path, capsys):
    table = write_table(tmp_path / "human.csv", {"gaussian_noise": late, "shot_noise": late, "impulse_noise": late,
                                                 "gaussian_blur": early}, 2000)  # fmt: skip
    out = tmp_path / "sim"
    argv = ["analyze", "vcr-similarity", str(table), "--out", str(out), "--property", "a", "--vcr-band-resamples", "40"]
    assert main(argv) == 0
    res = json.loads((out / "vcr-similarity.json").read_text())
    human = res["observers"]["human"]
    assert human["classes"] == [["gaussian_noise", "shot_noise", "impulse_noise"], ["gaussian_blur"]]
    assert human["cliques"] == [["gaussian_noise", "shot_noise", "impulse_noise"]]
    noise = pair(human, "gaussian_noise", "shot_noise")
    assert noise["similar"] and noise["by_property"]["a"]["overlap"] == [[0.0, 1.0]]
    blur = pair(human, "gaussian_blur", "shot_noise")["by_property"]["a"]
    # the early drop (turning point 0.45) and the late one (0.8) differ in between, not at the ends
    assert not blur["similar"] and blur["alpha"] == 0.05 and blur["critical_value"] > 1.96
    lo, hi = blur["differ"][0][0], blur["differ"][-1][1]
    assert 0.2 < lo < 0.45 and 0.8 < hi < 1.0 and blur["overlap"][0][0] == 0.0
    assert blur["pointwise"]["overlap_share"] <= blur["simultaneous"]["overlap_share"]
    assert (out / "vcr-similarity-human-a.png").exists() and res["properties"] == ["a"]
    printed = capsys.readouterr().out
    assert "similar  gaussian_noise ~ shot_noise" in printed
    assert "classes: {gaussian_noise, shot_noise, impulse_noise}, {gaussian_blur}" in printed


def test_a_models_gaussian_and_uniform_noise_differ_only_above_0_8(tmp_path):
    """The paper's model question: the same curve up to Δv = 0.8; above it the model keeps 55 % on uniform noise."""

    def uniform(v):
        return np.where(v < 0.8, late(v), np.maximum(late(v), 0.55))

    table = write_table(tmp_path / "eval_results.csv", {"gaussian_noise": late, "uniform_noise": uniform}, 20_000,
                        seed=1, model="net")  # fmt: skip
    res = vcr_similarity(table, settings=VCRSettings(band_resamples=40), properties=("a",))
    e = pair(res["observers"]["net"], "gaussian_noise", "uniform_noise")
    assert not e["similar"]
    differ = e["by_property"]["a"]["differ"]
    assert len(differ) == 1 and 0.8 <= differ[0][0] <= 0.9 and differ[0][1] == 1.0


def test_a_real_build_evaluated_by_a_model(tmp_path, capsys):
    import corruptgen
    from corruptgen.eval import MetricOptions, evaluate

    corruptgen.build("vcr", out=tmp_path, subsets="gaussian_noise,uniform_noise", limit=2, per_image=2,
                     progress=False, card=False)  # fmt: skip
    # 4 images per subset: with the default 40 bins of 20 no curve is estimated, and eval says so once per subset
    fake = ["--model", "fake=eval_helpers:fake_model", "--no-progress"]
    assert main(["eval", str(tmp_path / "vcr"), "--out", str(tmp_path / "dflt"), *fake]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: fake: VCR")]
    assert [n.split(":")[2].strip() for n in notes] == ["VCR gaussian_noise", "VCR uniform_noise"]
    assert "R_a, R_p not estimated: 0 of 40 Δv bins hold ≥ 20 images" in notes[0]
    (res,) = (tmp_path / "dflt").glob("results-*.json")
    e = json.loads(res.read_text())["metrics"]["vcr"]["subsets"]["gaussian_noise"]
    assert e["R_a"] is None and e["refused"]["R_a"].startswith("0 of 40") and e["curve_a"]["grid"] is None
    report = (tmp_path / "dflt" / "report.md").read_text()
    assert "Not estimated (–), below the minimum support:" in report and "* fake: VCR uniform_noise: R_a" in report
    assert main(["analyze", "vcr-similarity", str(tmp_path / "dflt"), "--out", str(tmp_path / "s0")]) == 0
    assert "skipped gaussian_noise: s_a: 0 of 40 Δv bins" in capsys.readouterr().err
    opts = MetricOptions(vcr=VCRSettings(bins=4, min_per_bin=1, band_resamples=20, min_support=0))
    run = evaluate(tmp_path / "vcr", [fake_model()], out=tmp_path / "res", options=opts, report=False)
    curve = run.results[0]["metrics"]["vcr"]["subsets"]["gaussian_noise"]["curve_a"]
    assert curve["spline"]["method"] == "quantile" and len(curve["band"]["lo"]) == 101
    settings = run.results[0]["metrics"]["vcr"]["settings"]  # the choice and λ are in every results file
    assert (settings["spline"], settings["lam"], settings["band_level"]) == ("quantile", 3e-4, 0.83)
    out = tmp_path / "sim"
    assert main(["analyze", "vcr-similarity", str(tmp_path / "res"), "--out", str(out)]) == 0
    res = json.loads((out / "vcr-similarity.json").read_text())
    (e,) = res["observers"]["fake"]["pairs"]
    assert e["functions"] == ["gaussian_noise", "uniform_noise"] and set(e["by_property"]) == {"a", "p"}
    assert (out / "vcr-similarity-fake-a.png").exists()


def test_bad_inputs(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("vd_score,label\n0.1,cat\n")
    assert main(["analyze", "vcr-similarity", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "missing orig_pred, transf_pred" in capsys.readouterr().err
    table = write_table(tmp_path / "h.csv", {"x": late}, 50)
    assert main(["analyze", "vcr-similarity", str(table), "--range", "0.5", "--out", str(tmp_path / "o")]) == 2
    with pytest.raises(CorruptgenError, match="properties"):
        vcr_similarity(table, properties=("q",))
