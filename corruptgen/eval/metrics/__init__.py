"""Every metric of the source papers, computed from a :class:`~corruptgen.eval.predictions.Predictions` table.

One module per family: :mod:`.common` (accuracy, error, consistency, residual robustness, APP, effective robustness),
:mod:`.imagenet_c` (CE, mCE, relative mCE), :mod:`.imagenet_p` (FP, T5D, mFR, mT5D), :mod:`.syn2nat` (Syn2Nat score,
categories, overlap, K-means, Algorithm 2), :mod:`.vcr` (R̂_a, R̂_p, HMRI, MRSI, coverage), :mod:`.optics` (Δ to the
defocus baseline, Kendall τ).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import CorruptgenError
from ..predictions import Predictions
from . import common, imagenet_c, imagenet_p, optics, syn2nat, vcr

__all__ = ["FAMILIES", "MetricOptions", "common", "compute_metrics", "detect_family", "imagenet_c", "imagenet_p",
           "optics", "syn2nat", "vcr"]  # fmt: skip

FAMILIES = ("syn2nat", "imagenet_c", "imagenet_p", "vcr", "optics", "generic")
_ALIASES = {"imagenet-c": "imagenet_c", "imagenetc": "imagenet_c", "imagenet-p": "imagenet_p",
            "imagenetp": "imagenet_p",
            "opticsbench": "optics", "opticsbench-rg": "optics", "opticsbench_rg": "optics", "syn2nat": "syn2nat",
            "vcr": "vcr"}  # fmt: skip


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


def detect_family(benchmark: str | None, pred: Predictions | None = None) -> str:
    """The metric family of a build: from its benchmark name, else from what the samples carry."""
    name = (benchmark or "").strip().lower()
    if name in _ALIASES:
        return _ALIASES[name]
    if name.replace("-", "_") in FAMILIES:
        return name.replace("-", "_")
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
    ref_rows = (opt.reference or {}).get("metrics", {}).get("subsets") if opt.reference else None
    ref_name = (opt.reference or {}).get("model", {}).get("name", "reference") if opt.reference else None
    if family == "imagenet_c":
        ref = imagenet_c.reference_from_rows(ref_rows, ref_name) if ref_rows else None
        out["imagenet_c"] = imagenet_c.imagenet_c_metrics(rows, ref)
    elif family == "imagenet_p":
        ref_p = (opt.reference or {}).get("metrics", {}).get("imagenet_p", {}).get("perturbations")
        out["imagenet_p"] = imagenet_p.imagenet_p_metrics(pred, ref_p)
    elif family == "syn2nat":
        out["syn2nat"] = syn2nat.syn2nat_metrics(rows)
    elif family == "vcr":
        out["vcr"] = vcr.vcr_metrics(pred, humans=opt.humans, settings=opt.vcr)
    elif family == "optics":
        out["optics"] = optics.delta_to_baseline({n: r["top1"] for n, r in rows.items()})
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
