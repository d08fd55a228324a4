"""The thesis's Table 3.4 layouts in ``corruptgen report`` (Laugros, PhD thesis 2022): APP = acc_c / acc_clean
(Eq. 2.2) per ImageNet-C corruption (mean over severities) and per extra synthetic corruption, clean accuracy, one row
per model across builds, and a further section added with one entry."""

from __future__ import annotations

import csv

import pytest

from corruptgen.eval import thesis_tables
from corruptgen.eval.metrics.common import accuracy_preserved, residual_robustness
from corruptgen.eval.report import write_report


def _result(model: str, benchmark: str, top1: dict[str, float], corruption: dict[str, str] | None = None) -> dict:
    clean = top1["clean"]
    rows = {n: {"top1": v, "labelled": 4, "images": 4, "samples": 4, "app": accuracy_preserved(clean, v),
                "residual_robustness": residual_robustness(clean, v), "corruption": (corruption or {}).get(n, n)}
            for n, v in top1.items()}  # fmt: skip
    rows["clean"]["corruption"] = None
    summary = {k: None for k in ("clean_top1", "mean_top1", "mean_residual_robustness", "mean_app",
                                 "mean_consistency")}  # fmt: skip
    return {"model": {"name": model}, "data": {"source": f"/b/{benchmark}", "benchmark": benchmark,
                                               "plan_id": benchmark},
            "metrics": {"family": "generic", "subsets": rows, "summary": summary}}  # fmt: skip


def _imagenet_c(model: str, clean: float, noise: tuple[float, float], contrast: float) -> dict:
    top1 = {"clean": clean, "gaussian_noise_s1": noise[0], "gaussian_noise_s5": noise[1], "contrast_s3": contrast}
    names = {"gaussian_noise_s1": "gaussian_noise", "gaussian_noise_s5": "gaussian_noise", "contrast_s3": "contrast"}
    return _result(model, "imagenet-c", top1, names)


def test_rr_and_app_follow_the_thesis_equations():
    assert residual_robustness(0.8, 0.6) == pytest.approx(0.2)  # Eq. 2.1: points lost
    assert accuracy_preserved(0.8, 0.6) == pytest.approx(0.75)  # Eq. 2.2: share kept


def test_report_prints_tables_3_4a_and_3_4b_per_model(tmp_path):
    results = [
        _imagenet_c("resnet", 0.8, (0.6, 0.2), 0.4),
        _imagenet_c("mtlat", 0.5, (0.5, 0.3), 0.5),
        _result("resnet", "laugros", {"clean": 0.8, "rotation": 0.4, "obstruction": 0.6}),
        _result("mtlat", "laugros", {"clean": 0.5, "rotation": 0.5, "obstruction": 0.25}),
    ]
    write_report(results, tmp_path)
    md = (tmp_path / "report.md").read_text()
    a = md[md.index("### Table 3.4a") :]
    assert "| model | Clean % | Gauss | Contr | mean |" in a
    assert "| resnet | 80.0 | 0.50 | 0.50 | 0.50 |" in a  # Gauss: mean of 0.6/0.8 and 0.2/0.8
    assert "| mtlat | 50.0 | 0.80 | 1.00 | 0.90 |" in a
    b = md[md.index("### Table 3.4b") :]
    assert "| model | Obstru | Rot | mean |" in b  # the thesis's column order; same clean: shown once
    assert "| resnet | 0.75 | 0.50 | 0.62 |" in b and "| mtlat | 0.50 | 1.00 | 0.75 |" in b
    with open(tmp_path / "thesis-3.4a.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["model"] == "resnet" and float(rows[0]["Gauss"]) == pytest.approx(0.5)


def test_clean_is_repeated_when_the_builds_differ_and_sections_are_absent_without_their_subsets(tmp_path):
    results = [_imagenet_c("m", 0.8, (0.4, 0.4), 0.4), _result("m", "laugros", {"clean": 0.5, "border": 0.25})]
    lines, made = thesis_tables.render(results, tmp_path, lambda header, rows: [" | ".join(header)])
    assert "model | Clean % | Border | mean" in lines  # another clean accuracy: shown again
    assert [p.name for p in made] == ["thesis-3.4a.csv", "thesis-3.4b.csv"]
    syn2nat = [_result("m", "syn2nat", {"clean": 0.5, "blur": 0.25})]
    assert thesis_tables.render(syn2nat, tmp_path, lambda h, r: []) == ([], [])


def test_one_more_section_is_one_entry(tmp_path):
    attack = thesis_tables.Section("3.4c", "APP per adversarial attack", lambda name, row, built: name,
                                   sources=("attacks",))  # fmt: skip
    result = _result("m", "laugros", {"clean": 0.8, "rotation": 0.4})
    result["metrics"]["attacks"] = {"pgd eps=0.04": {"top1": 0.2, "app": 0.25}, "cw_l2": {"top1": 0.4}}
    lines, _ = thesis_tables.render([result], tmp_path, lambda h, r: [" | ".join(h), *(" | ".join(x) for x in r)],
                                    [*thesis_tables.SECTIONS, attack])  # fmt: skip
    assert "### Table 3.4c: APP per adversarial attack" in lines
    assert "m | 0.25 | 0.50 | 0.38" in lines  # cw_l2's APP from its top-1 and the clean accuracy


def _attacks(model: str, benchmark: str, top1: dict[str, float], whitebox: bool, surrogate: bool = False) -> dict:
    names = {n: ("whitebox/" if whitebox else "") + n.removeprefix("whitebox_").split("_eps")[0] for n in top1}
    result = _result(model, benchmark, {"clean": 0.8, **top1}, names)
    for name, row in result["metrics"]["subsets"].items():
        if surrogate and name != "clean":
            row["on_surrogate"] = True
    return result


def test_table_3_4c_has_the_thesis_columns_in_its_order(tmp_path):
    """Table 3.4c: white-box PGD, PGD_LL (ε = 0.04) and CW_2, black-box MI_FGSM (ε = 0.04, 0.08), headed as the
    thesis prints them, no mean over them; any other attack or setting says which it is."""
    white = {"whitebox_cw_l2": 0.4, "whitebox_pgd_ll_eps0_04": 0.2, "whitebox_pgd_eps0_04": 0.0,
             "whitebox_mi_fgsm_eps0_04": 0.1}  # fmt: skip
    black = {"mi_fgsm_eps0_08": 0.6, "mi_fgsm_eps0_04": 0.4, "pgd_eps0_04": 0.5}
    results = [_attacks("r50", "adversarial", black, False), _attacks("r50", "syn2nat", white, True)]
    lines, _ = thesis_tables.render(results, tmp_path, lambda h, r: [" | ".join(h), *(" | ".join(x) for x in r)],
                                    [s for s in thesis_tables.SECTIONS if s.key == "3.4c"])  # fmt: skip
    header = next(line for line in lines if line.startswith("model"))
    assert header == ("model | Clean % | pgd ε=0.04 | pgd_ll ε=0.04 | cw_l2 | mi_fgsm ε=0.04 | mi_fgsm ε=0.08 | "
                      "pgd ε=0.04 (black-box) | mi_fgsm ε=0.04 (white-box)")  # fmt: skip
    assert "r50 | 80.0 | 0.00 | 0.25 | 0.50 | 0.50 | 0.75 | 0.62 | 0.12" in lines


def test_transfer_columns_of_the_surrogate_itself_say_so(tmp_path):
    """A transfer set evaluated on the model it was crafted on is a white-box attack for that model."""
    results = [_attacks("surrogate", "adversarial", {"mi_fgsm_eps0_04": 0.2}, False, surrogate=True),
               _attacks("other", "adversarial", {"mi_fgsm_eps0_04": 0.6}, False)]  # fmt: skip
    write_report(results, tmp_path)
    md = (tmp_path / "report.md").read_text()
    c = md[md.index("### Table 3.4c") :]
    assert "| model | Clean % | mi_fgsm ε=0.04 | mi_fgsm ε=0.04 (crafted on this model: white-box) |" in c
    assert "| surrogate | 80.0 | – | 0.25 |" in c and "| other | 80.0 | 0.75 | – |" in c


def test_app_is_undefined_when_clean_accuracy_is_0(tmp_path):
    result = _result("blind", "laugros", {"clean": 0.0, "rotation": 0.0})
    result["metrics"]["summary"]["clean_top1"] = 0.0
    write_report([result], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| blind | 0.0 | undefined (clean accuracy 0) | undefined (clean accuracy 0) |" in md
    summary = md[md.index("### Summary") : md.index("### Top-1")]
    assert "undefined (clean accuracy 0)" in summary
