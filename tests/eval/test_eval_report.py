"""Report and plot details: visible 0 % bars, the hatched clean bar in the legend, labelled counts."""

from __future__ import annotations

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
