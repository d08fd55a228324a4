"""Every metric of the source papers, computed from a :class:`~corruptgen.eval.predictions.Predictions` table.

One module per family: :mod:`.common` (accuracy, error, consistency, residual robustness, APP, effective robustness),
:mod:`.imagenet_c` (CE, mCE, relative mCE), :mod:`.imagenet_p` (FP, T5D, mFR, mT5D), :mod:`.syn2nat` (Syn2Nat score,
categories, overlap, K-means, Algorithm 2), :mod:`.vcr` (R̂_a, R̂_p, HMRI, MRSI, coverage), :mod:`.optics` (Δ to the
defocus baseline, Kendall τ), :mod:`.laugros` (CE against a reference model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import CorruptgenError
from ...registry import Registry
from ..predictions import Predictions
from . import common, imagenet_c, imagenet_p, laugros, optics, syn2nat, vcr

__all__ = ["METRICS", "MetricOptions", "common", "compute_metrics", "detect_family", "imagenet_c", "imagenet_p",
           "laugros", "optics", "register_metrics", "syn2nat", "vcr"]  # fmt: skip

#: Metric families: name -> section function ``(pred, rows, options) -> dict`` (the family's own metrics, stored
#: under ``results["metrics"][name]``). A benchmark family names its metric family (``Benchmark.metrics``); a new
#: kind of metric registers here with :func:`register_metrics`.
METRICS: Registry[Callable[[Predictions, dict, MetricOptions], dict]] = Registry("metric family")
register_metrics = METRICS.register


@dataclass
class MetricOptions:
    """What a metric needs besides the predictions.

    ``reference``: a reference model's results (a loaded corruptgen results file) for CE/mCE and mFR/mT5D instead of
    AlexNet; ``humans``: VCR human trials per corruption (``"*"`` = every subset); ``er_beta``/``er_intercept``: the
    line of effective robustness (fitted over models by ``corruptgen report`` when not given); ``accuracy``: fail
    when accuracy metrics are wanted but no image is labelled.
    """

    reference: Mapping[str, Any] | None = None
    humans: Mapping[str, vcr.HumanData] | None = None
    vcr: vcr.VCRSettings = field(default_factory=vcr.VCRSettings)
    er_beta: float | None = None
    er_intercept: float = 0.0
    er_logit: bool = False
    accuracy: bool = True
    #: VCR human curves fitted so far (they do not depend on the model: fitted once for all models evaluated)
    human_fits: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)


def detect_family(benchmark: str | None, pred: Predictions | None = None) -> str:
    """The metric family of a build: the one its benchmark family declares, else from what the samples carry."""
    from ...family.benchmark import FAMILIES as BENCHMARKS

    name = (benchmark or "").strip().lower()
    if name in METRICS:
        return METRICS.canonical(name)
    if name in BENCHMARKS:
        return BENCHMARKS.get(name)().metrics
    if pred is not None:
        if any(int(v.get("frames", 1)) > 1 for v in pred.subsets.values()) or (pred.frame > 0).any():
            return "imagenet_p"
        if np.isfinite(pred.delta_v).any():
            return "vcr"
        if any(s.startswith(optics.BASELINE + "_s") for s in pred.names()):
            return "optics"
    return "generic"


def compute_metrics(pred: Predictions, family: str, options: MetricOptions | None = None) -> dict[str, Any]:
    """All metrics of ``family`` for one model (``subsets``, ``summary`` and a section per family)."""
    opt = options or MetricOptions()
    labelled = bool((pred.label >= 0).any())
    if opt.accuracy and not labelled and family != "imagenet_p":
        raise CorruptgenError(
            "no labelled image in this data: accuracy metrics need labels (build from a labelled source, e.g. "
            "imagefolder with class folders, or pass --no-accuracy for label-free metrics only)"
        )
    rows = common.subset_table(pred)
    out: dict[str, Any] = {"family": family, "subsets": rows, "summary": common.summary(rows), "notes": []}
    if "clean" not in rows:
        out["notes"].append("no clean subset: residual robustness, APP and consistency are not available")
    if family != "generic":
        out[family] = METRICS.get(family)(pred, rows, opt)
    if opt.er_beta is not None and rows.get("clean", {}).get("top1") is not None:
        clean = rows["clean"]["top1"]
        er = {}
        for name, row in rows.items():
            if name != "clean" and row["top1"] is not None:
                er[name] = float(
                    common.effective_robustness(
                        [clean], [row["top1"]], beta=opt.er_beta, intercept=opt.er_intercept, logit=opt.er_logit
                    )[0][0]
                )
        out["effective_robustness"] = {"beta": opt.er_beta, "intercept": opt.er_intercept, "logit": opt.er_logit,
                                       "subsets": er}  # fmt: skip
    return out


def _reference_rows(opt: MetricOptions) -> tuple[Mapping[str, Any] | None, str | None]:
    """The reference model's per-subset rows and name (``--reference results.json``), or ``(None, None)``."""
    if not opt.reference:
        return None, None
    return opt.reference.get("metrics", {}).get("subsets"), opt.reference.get("model", {}).get("name", "reference")


@register_metrics("imagenet_c")
def _imagenet_c(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    ref_rows, ref_name = _reference_rows(opt)
    ref = imagenet_c.reference_from_rows(ref_rows, ref_name or "reference") if ref_rows else None
    return imagenet_c.imagenet_c_metrics(rows, ref)


@register_metrics("c_reference")
def _c_reference(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    """ImageNet-C's metrics with the reference model required for CE/mCE (CIFAR-10/100-C, Tiny-ImageNet-C, ...)."""
    ref_rows, ref_name = _reference_rows(opt)
    ref = imagenet_c.reference_from_rows(ref_rows, ref_name or "reference") if ref_rows else None
    return imagenet_c.reference_required_metrics(rows, ref)


@register_metrics("imagenet_p")
def _imagenet_p(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    ref_p = (opt.reference or {}).get("metrics", {}).get("imagenet_p", {}).get("perturbations")
    return imagenet_p.imagenet_p_metrics(pred, ref_p)


@register_metrics("laugros")
def _laugros(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    ref_rows, ref_name = _reference_rows(opt)
    return laugros.laugros_metrics(rows, ref_rows, ref_name)


@register_metrics("syn2nat")
def _syn2nat(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    return syn2nat.syn2nat_metrics(rows)


@register_metrics("vcr")
def _vcr(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    return vcr.vcr_metrics(pred, humans=opt.humans, settings=opt.vcr, human_fits=opt.human_fits)


@register_metrics("optics")
def _optics(pred: Predictions, rows: dict, opt: MetricOptions) -> dict:
    return optics.delta_to_baseline({n: r["top1"] for n, r in rows.items()})
