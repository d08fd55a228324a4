"""Metrics of the small-image ImageNet-C variants: CE/mCE only against a ``--reference`` results file (the papers give
no AlexNet errors for CIFAR-10/100-C, Tiny-ImageNet-C or ImageNet-64×64-C)."""

from __future__ import annotations

import pytest

from corruptgen.eval.metrics import METRICS, MetricOptions, detect_family


def _rows(clean: float, errors: dict[str, list[float]]) -> dict[str, dict]:
    rows = {"clean": {"error": clean}}
    for corruption, by_severity in errors.items():
        for s, error in enumerate(by_severity, 1):
            rows[f"{corruption}_s{s}"] = {"error": error, "corruption": f"cifar10_c/{corruption}", "severity": s}
    return rows


@pytest.mark.parametrize("family", ["cifar10-c", "cifar100-c", "tinyimagenet-c", "imagenet64-c"])
def test_families_use_the_reference_metrics(family: str) -> None:
    assert detect_family(family) == "c_reference"


def test_without_reference_no_alexnet_ce() -> None:
    rows = _rows(0.05, {"gaussian_noise": [0.1, 0.2, 0.3, 0.4, 0.5], "fog": [0.1, 0.1, 0.1, 0.1, 0.1]})
    out = METRICS.get("c_reference")(None, rows, MetricOptions())
    assert out["mce"] is None and out["reference"] is None and "--reference" in out["notes"][0]
    assert out["mean_error"] == pytest.approx(0.2)
    assert out["corruptions"]["gaussian_noise"]["errors"]["3"] == 0.3


def test_with_reference_ce_and_relative_ce() -> None:
    model = _rows(0.05, {"gaussian_noise": [0.1, 0.2, 0.3, 0.4, 0.5], "fog": [0.1, 0.1, 0.1, 0.1, 0.1]})
    ref = _rows(0.1, {"gaussian_noise": [0.2, 0.4, 0.6, 0.8, 1.0], "fog": [0.3, 0.3, 0.3, 0.3, 0.3]})
    reference = {"model": {"name": "wrn"}, "metrics": {"subsets": ref}}
    out = METRICS.get("c_reference")(None, model, MetricOptions(reference=reference))
    assert out["corruptions"]["gaussian_noise"]["ce"] == pytest.approx(1.5 / 3.0)
    assert out["corruptions"]["fog"]["ce"] == pytest.approx(0.5 / 1.5)
    assert out["mce"] == pytest.approx((0.5 + 1 / 3) / 2)
    assert out["corruptions"]["fog"]["relative_ce"] == pytest.approx((0.5 - 0.25) / (1.5 - 0.5))
    assert out["reference"] == "wrn"
