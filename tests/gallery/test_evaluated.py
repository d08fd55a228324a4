"""An evaluated build's gallery: each cell shows the results file's top-1 accuracy and each thumbnail whether the
model's top-1 class (from the predictions file `corruptgen eval` wrote) is the label."""

from __future__ import annotations

import json

import torch
from site_reading import cell_accuracies, parse_page, site_record, thumbs

import corruptgen
from corruptgen.eval import evaluate
from corruptgen.eval.predictions import Predictions
from corruptgen.models.loading import EvalModel


class _Brightness(torch.nn.Module):
    """A deterministic stand-in classifier: the class follows the image's mean brightness."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        level = x.mean(dim=(1, 2, 3))
        return torch.stack([-(level - c / 500.0).abs() for c in range(1000)], dim=1)


def _model() -> EvalModel:
    net = _Brightness()
    return EvalModel(name="bright", spec="test:bright", forward=net, module=net, input_size=64, num_classes=1000)


def test_cells_show_accuracy_and_thumbnails_their_marks(icb, tmp_path):
    run = evaluate(icb, [_model()], out=tmp_path / "res", report=False)
    results = tmp_path / "res" / "results-bright.json"
    site = tmp_path / "site"
    corruptgen.gallery(icb, site, results=[results])
    page = parse_page(site)
    top1 = {name: row["top1"] for name, row in run.results[0]["metrics"]["subsets"].items()}
    shown = cell_accuracies(page)
    assert shown.pop("clean") == [repr(top1["clean"])] * 2  # the clean column of both rows
    assert shown == {name: [repr(value)] for name, value in top1.items() if name != "clean"}
    pred = Predictions.from_parquet(tmp_path / "res" / "predictions-bright.parquet")
    truth = {
        (s, k): bool(p == y) for s, k, p, y in zip(pred.subset, pred.key, pred.top1, pred.label, strict=True) if y >= 0
    }
    marked = {(a["data-subset"], a["data-key"]): a.get("data-correct") for a in thumbs(page)}
    assert {k: v for k, v in marked.items() if v is not None} == {k: str(v).lower() for k, v in truth.items()}
    assert marked[("clean", "astronaut")] is None  # unlabelled: no mark
    assert site_record(site)["facts"]["model-0"] == "bright"


def test_results_without_predictions_or_of_other_shards_are_said(icb, tmp_path):
    evaluate(icb, [_model()], out=tmp_path / "res", report=False, predictions=False, subsets=["frost_s1"])
    results = tmp_path / "res" / "results-bright.json"
    data = json.loads(results.read_text())
    data["data"]["shards"]["data/frost_s1/test-00000.tar"] = "0" * 64
    results.write_text(json.dumps(data))
    corruptgen.gallery(icb, tmp_path / "site", results=[results])
    notes = site_record(tmp_path / "site")["notes"]
    assert any("no per-sample predictions" in n for n in notes)
    assert any("frost_s1: evaluated on other shards" in n for n in notes)
    page = parse_page(tmp_path / "site")
    assert "frost_s1" not in cell_accuracies(page)
    assert all(a.get("data-correct") is None for a in thumbs(page))
