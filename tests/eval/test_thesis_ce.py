"""Table 4.1 of Laugros's thesis in ``corruptgen report``: mean CE of ImageNet-C's set₁ / set₂ (§4.2.5) and the CE of
border and obstruction against a reference model (§4.2.6, Eq. 2.4); the ``laugros`` family's CE metrics."""

from __future__ import annotations

import csv

import pytest
from eval_helpers import classify_samples, fake_model, noise

from corruptgen.eval import evaluate
from corruptgen.eval.metrics import MetricOptions
from corruptgen.eval.metrics.imagenet_c import COMMON_15, corruption_errors
from corruptgen.eval.metrics.laugros import NO_REFERENCE, laugros_metrics
from corruptgen.eval.report import write_report
from corruptgen.eval.thesis_ce import SET_1, SET_2, table_4_1


def test_sets_are_imagenet_c_split_as_section_4_2_5():
    assert len(SET_1) == 8 and len(SET_2) == 7 and set(SET_1) | set(SET_2) == set(COMMON_15)
    assert {c for c in SET_1 if "noise" in c} == {"gaussian_noise", "shot_noise", "impulse_noise"}
    assert {c for c in SET_1 if "blur" in c} == {"defocus_blur", "glass_blur", "motion_blur", "zoom_blur"}
    assert "pixelate" in SET_1


def test_laugros_ce_is_the_error_ratio_to_the_reference():
    rows = {"clean": {"error": 0.2}, "border": {"error": 0.5, "corruption": "laugros/border"}}
    ref = {"clean": {"error": 0.4}, "border": {"error": 0.8, "corruption": "laugros/border"}}
    out = laugros_metrics(rows, ref, "alexnet")
    assert out["corruptions"]["border"]["ce"] == pytest.approx(0.5 / 0.8)
    assert out["corruptions"]["border"]["relative_ce"] == pytest.approx((0.5 - 0.2) / (0.8 - 0.4))  # Eq. 2.4
    assert out["reference"] == "alexnet" and out["notes"] == []
    alone = laugros_metrics(rows, None)
    assert alone["corruptions"]["border"]["ce"] is None and alone["notes"] == [NO_REFERENCE]
    assert laugros_metrics(rows, {"clean": {"error": 0.4}})["notes"] == ["the reference has no error for: border"]


SUMMARY = dict.fromkeys(("clean_top1", "mean_top1", "mean_residual_robustness", "mean_app", "mean_consistency"))


def _result(model: str, benchmark: str, family: str, subsets: dict, section: dict) -> dict:
    return {"model": {"name": model}, "data": {"source": f"/b/{benchmark}", "benchmark": benchmark,
                                               "plan_id": benchmark},
            "metrics": {"family": family, "subsets": subsets, "summary": SUMMARY, family: section}}  # fmt: skip


def _imagenet_c(model: str, ce: dict[str, float]) -> dict:
    corruptions = {c: {"ce": v, "relative_ce": None, "severities": [1, 2, 3, 4, 5]} for c, v in ce.items()}
    section = {**corruption_errors({}, None), "corruptions": corruptions}  # an empty section, then the CEs
    return _result(model, "imagenet-c", "imagenet_c", {}, section)


def _laugros(model: str, ce: dict[str, float]) -> dict:
    subsets = {n: {"corruption": f"laugros/{n}", "top1": None} for n in ce}
    return _result(model, "laugros", "laugros", subsets, {"corruptions": {n: {"ce": v} for n, v in ce.items()}})


def test_table_4_1_averages_the_sets_and_takes_border_and_obstruction():
    full = {c: 0.8 for c in SET_1} | {c: 0.6 for c in SET_2} | {"gaussian_noise": 0.4}  # set₁ mean (7·0.8 + 0.4)/8
    results = [_imagenet_c("standard", full), _laugros("standard", {"border": 0.53, "obstruction": 0.63,
                                                                    "rotation": 0.9})]  # fmt: skip
    table = table_4_1(results)
    assert table["standard"]["mean CE set₁"] == (pytest.approx(0.75), 8)
    assert table["standard"]["mean CE set₂"] == (pytest.approx(0.6), 7)
    assert table["standard"]["Border"] == (0.53, 1) and table["standard"]["Obstruction"] == (0.63, 1)
    assert table_4_1([_laugros("m", {"rotation": 0.9})]) is None


def test_report_prints_table_4_1(tmp_path):
    results = [_imagenet_c("standard", {"gaussian_noise": 0.81, "snow": 0.73, "fog": 0.71}),
               _imagenet_c("augmix", {c: 0.66 for c in SET_1} | {c: 0.65 for c in SET_2}),
               _laugros("augmix", {"border": 0.5, "obstruction": 0.63})]  # fmt: skip
    write_report(results, tmp_path)
    md = (tmp_path / "report.md").read_text()
    part = md[md.index("### Table 4.1") :]
    assert "| model | mean CE set₁ | mean CE set₂ | Border | Obstruction |" in part
    assert "| standard | 81.0 (1/8) | 72.0 (2/7) | – | – |" in part  # only some of each set evaluated
    assert "| augmix | 66.0 | 65.0 | 50.0 | 63.0 |" in part
    with open(tmp_path / "thesis-4.1.csv") as f:
        rows = {r["model"]: r for r in csv.DictReader(f)}
    assert float(rows["augmix"]["border_ce"]) == pytest.approx(0.5) and rows["standard"]["set1_corruptions"] == "1"


def test_eval_of_a_laugros_build_with_a_reference_gives_the_ce(make_build, photos, tmp_path):
    """End to end: two models on one laugros build; the second's results are the first's reference."""
    subsets = {"clean": classify_samples(photos, "laugros", "clean")}
    for i, name in enumerate(("border", "obstruction")):
        subsets[name] = classify_samples(photos, "laugros", name, lambda im, k, i=i: noise(im, 0.3 + 0.2 * i, k),
                                         corruption=f"laugros/{name}")  # fmt: skip
    build = make_build("laugros", subsets)
    reference = evaluate(build, [fake_model(name="ref")], report=False, out=tmp_path / "ref").results[0]
    assert reference["metrics"]["family"] == "laugros"
    assert reference["metrics"]["laugros"]["notes"] == [NO_REFERENCE]
    run = evaluate(build, [fake_model(name="mine")], report=False, out=tmp_path / "mine",
                   options=MetricOptions(reference=reference))  # fmt: skip
    per = run.results[0]["metrics"]["laugros"]["corruptions"]
    for name in ("border", "obstruction"):
        mine, ref = run.results[0]["metrics"]["subsets"][name]["error"], reference["metrics"]["subsets"][name]["error"]
        assert per[name]["reference_error"] == ref
        assert ref and per[name]["ce"] == pytest.approx(mine / ref)


def test_report_prints_table_3_2_with_the_flip(tmp_path):
    top1 = {"clean": 0.8, "flip": 0.6, "gaussian_noise": 0.4, "border": 0.2}
    rows = {
        n: {"top1": v, "app": v / 0.8, "corruption": None if n == "clean" else f"laugros/{n}"} for n, v in top1.items()
    }
    result = _result("standard", "laugros", "laugros", rows, {"corruptions": {}})
    write_report([result], tmp_path)
    md = (tmp_path / "report.md").read_text()
    part = md[md.index("### Table 3.2") :]
    assert part.splitlines()[2] == "| model | gaus | flip | mean |"  # Table 3.2's order; border is not in it
    assert "| standard | 0.50 | 0.75 | 0.62 |" in part
