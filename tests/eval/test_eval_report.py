"""Report and plot details: visible 0 % bars, the hatched clean bar in the legend, labelled counts."""

from __future__ import annotations

import numpy as np
import pytest

from corruptgen.eval import plots
from corruptgen.eval.report import write_report


def _result(model: str, top1: dict[str, float | None], labelled: int = 3, images: int = 4) -> dict:
    rows = {n: {"top1": v, "labelled": labelled, "images": images, "samples": images} for n, v in top1.items()}
    summary = {k: None for k in ("clean_top1", "mean_top1", "mean_residual_robustness", "mean_app",
                                 "mean_consistency")}  # fmt: skip
    return {"model": {"name": model}, "data": {"source": "/b/tiny", "benchmark": "tiny", "plan_id": "p"},
            "metrics": {"family": "generic", "subsets": rows, "summary": summary}}  # fmt: skip


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plots._plt().close("all")


def test_zero_accuracy_bar_is_visible_and_labelled():
    fig = plots.accuracy_bars_figure([_result("m", {"clean": 0.75, "blur": 0.0, "noise": 0.5})])
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert len(widths) == 3 and min(widths) > 0  # the 0 % bar is drawn (an outlined stub), not width 0
    assert [t.get_text() for t in ax.texts] == ["0%"]


def test_missing_accuracy_is_not_drawn_as_zero():
    fig = plots.accuracy_bars_figure([_result("m", {"clean": 0.75, "blur": None})])
    assert [t.get_text() for t in fig.axes[0].texts] == ["n/a"]


def test_legend_explains_the_hatched_clean_bar():
    two = [_result("a", {"clean": 0.8, "blur": 0.4}), _result("b", {"clean": 0.7, "blur": 0.3})]
    fig = plots.accuracy_bars_figure(two)
    legend = fig.axes[0].get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[:2] == ["a", "b"] and "clean" in texts[2]
    patches = legend.get_patches()
    assert patches[2].get_hatch() == "//" and not patches[0].get_hatch()
    assert fig.axes[0].patches[0].get_hatch() == "//"  # model a's clean bar


def test_report_says_how_many_images_carried_labels(tmp_path):
    write_report([_result("m", {"clean": 0.5, "blur": 0.25}, labelled=3, images=4)], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "6 of 8 images carried a label" in md
    assert "| subset | labelled / images | m |" in md and "| blur | 3 / 4 | 25.00 |" in md


def _graded(model: str, family: str, top1: dict[str, float | None], **section) -> dict:
    """A result of ``family`` whose subsets are <corruption>_s<severity> (plus clean)."""
    r = _result(model, top1)
    for name, row in r["metrics"]["subsets"].items():
        corruption, _, severity = name.rpartition("_s")
        row.update(corruption=corruption or None, severity=int(severity) if corruption else None)
    r["metrics"].update(family=family, **section)
    return r


def test_relative_ce_that_rounds_to_zero_is_not_negative(tmp_path):
    section = {
        "imagenet_c": {
            "corruptions": {"fog": {"ce": 0.9016, "relative_ce": -0.00004}},
            "mce": 0.9016,
            "relative_mce": -0.00004,
            "notes": [],
            "reference": "AlexNet",
            "denominator_set": "a",
        }
    }
    write_report([_graded("m", "imagenet_c", {"clean": 0.7, "fog_s1": 0.5}, **section)], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| fog | 90.2 (0.0) |" in md and "-0.0" not in md


def test_one_mean_top1_column_and_mce_ranks_c_reference(tmp_path):
    section = {"c_reference": {"corruptions": {}, "mce": None, "relative_mce": None, "notes": []}}
    write_report([_graded("m", "c_reference", {"clean": 0.7, "fog_s1": 0.5}, **section)], tmp_path)
    header = next(line for line in (tmp_path / "report.md").read_text().splitlines() if line.startswith("| rank"))
    assert header.count("mean top-1 %") == 1
    section["c_reference"]["mce"] = 0.8
    write_report([_graded("m", "c_reference", {"clean": 0.7, "fog_s1": 0.5}, **section)], tmp_path)
    header = next(line for line in (tmp_path / "report.md").read_text().splitlines() if line.startswith("| rank"))
    assert header.count("mean top-1 %") == 1 and header.endswith("| mCE % |")


def test_not_evaluated_is_not_n_a(tmp_path):
    a = _result("a", {"clean": 0.8, "blur": None})  # run on blur, no labelled image there
    b = _result("b", {"clean": 0.7})  # never run on blur
    write_report([a, b], tmp_path)
    assert "| blur | 3 / 4 | n/a | not evaluated |" in (tmp_path / "report.md").read_text()
    texts = [t.get_text() for t in plots.accuracy_bars_figure([a, b]).axes[0].texts]
    assert sorted(texts) == ["n/a", "not evaluated"]


def test_severity_lines_break_where_a_severity_was_not_evaluated():
    r = _graded("m", "imagenet_c", {"clean": 0.8, "fog_s1": 0.6, "fog_s3": 0.4, "frost_s1": 0.5, "frost_s2": 0.3})
    fig = plots.accuracy_vs_severity_figure([r])
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    x, y = lines["fog"].get_xdata(), lines["fog"].get_ydata()
    assert list(x) == [0, 1, 2, 3] and np.isnan(y[2]) and list(y[[0, 1, 3]]) == pytest.approx([80, 60, 40])
    assert not np.isnan(lines["frost"].get_ydata()).any()


def test_many_graded_subsets_make_a_compact_heat_map(tmp_path):
    from PIL import Image

    names = [f"c{i:02d}" for i in range(19)]
    top1 = {"clean": 0.8, **{f"{c}_s{s}": 0.8 - 0.1 * s for c in names for s in range(1, 6)}}
    del top1["c03_s4"]  # not evaluated
    top1["c04_s2"] = None  # no labelled image
    r = _graded("m", "imagenet_c", top1)
    fig = plots.accuracy_bars_figure([r])
    (image,) = fig.axes[0].get_images()
    assert image.get_array().shape == (19, 5)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "n/a" in texts and texts.count("") == 0 and len(texts) == 94  # one value per evaluated cell
    path = plots.accuracy_bars([r, _graded("n", "imagenet_c", top1)], tmp_path / "acc.png")
    width, height = Image.open(path).size
    assert width <= 1800 and height <= 1400, (width, height)
