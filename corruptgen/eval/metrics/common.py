"""Metrics shared by every family: top-k accuracy and error, prediction consistency with the clean image, residual
robustness, APP and effective robustness (Laugros, PhD thesis 2022, §2.3.1, Eqs. 2.1–2.3; Taori et al. 2020).

Accuracies are fractions in [0, 1]. A metric that cannot be computed (no labelled image, no clean subset) is ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import CorruptgenError
from ..predictions import Predictions

CLEAN = "clean"
#: corruption prefix of the subsets ``corruptgen eval --attacks`` adds (white-box attacks on the clean images)
WHITEBOX = "whitebox/"


def topk_accuracy(top5: np.ndarray, labels: np.ndarray, k: int = 1) -> float | None:
    """Share of labelled rows (label >= 0) whose label is among the first ``k`` predictions; ``None`` if none."""
    labelled = labels >= 0
    if not labelled.any():
        return None
    hits = (top5[labelled, :k] == labels[labelled, None]).any(axis=1)
    return float(hits.mean())


def residual_robustness(acc_clean: float | None, acc: float | None) -> float | None:
    """RR = acc_clean − acc_c (thesis Eq. 2.1; Laugros et al., BMVC 2021, §3): the accuracy points lost; lower is
    better (not the ratio: that is APP, :func:`accuracy_preserved`)."""
    return None if acc_clean is None or acc is None else float(acc_clean - acc)


def accuracy_preserved(acc_clean: float | None, acc: float | None) -> float | None:
    """APP = acc_c / acc_clean (thesis Eq. 2.2): the share of clean accuracy kept; higher is better."""
    if acc_clean is None or acc is None or acc_clean == 0:
        return None
    return float(acc / acc_clean)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def effective_robustness(
    acc_clean: Sequence[float] | np.ndarray,
    acc_shift: Sequence[float] | np.ndarray,
    *,
    beta: float | None = None,
    intercept: float = 0.0,
    logit: bool = False,
) -> tuple[np.ndarray, float, float]:
    """Effective robustness ER = acc_shift − (β·acc_clean + b) (Taori et al., NeurIPS 2020; thesis Eq. 2.3).

    The thesis prints ER = acc_clean − β·acc_c, which is not a residual from the fitted line it describes (its Fig. 2.6
    plots acc_c against acc_clean with slope β); this follows Taori et al.: the accuracy under the shift above what
    the clean accuracy predicts. With ``beta=None`` the line is fitted by least squares over the given models (at
    least 2); with ``logit=True`` the fit and the baseline are in logit space, as in Taori et al.

    Returns:
        (ER per model, β, b).
    """
    x = np.asarray(acc_clean, dtype=np.float64)
    y = np.asarray(acc_shift, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise CorruptgenError("effective robustness needs one clean and one shifted accuracy per model")
    fx, fy = (_logit(x), _logit(y)) if logit else (x, y)
    if beta is None:
        if len(x) < 2 or np.ptp(fx) == 0:
            raise CorruptgenError("fitting β for effective robustness needs at least 2 models with different clean "
                                  "accuracies (or give β)")  # fmt: skip
        beta, intercept = (float(v) for v in np.polyfit(fx, fy, 1))
    base = beta * fx + intercept
    if logit:
        base = 1 / (1 + np.exp(-base))
    return y - base, float(beta), float(intercept)


def clean_top1(pred: Predictions) -> dict[str, int]:
    """source_key → top-1 prediction on the clean image (frame 0) of the clean subset; empty if there is none."""
    rows = (pred.subset == CLEAN) & (pred.frame == 0)
    return dict(zip(pred.source_key[rows].tolist(), pred.top1[rows].tolist(), strict=True))


def consistency(pred: Predictions, rows: np.ndarray, reference: dict[str, int]) -> float | None:
    """Share of ``rows`` whose top-1 equals the top-1 on the clean image of the same source (VCR's p; 1.0 for the
    clean subset itself). ``None`` without a clean reference for these rows."""
    keys = pred.source_key[rows]
    ref = np.array([reference.get(k, -2) for k in keys.tolist()], dtype=np.int64)
    known = ref != -2
    if not known.any():
        return None
    return float((pred.top1[rows][known] == ref[known]).mean())


def subset_table(pred: Predictions) -> dict[str, dict[str, Any]]:
    """Per-subset accuracy, error, consistency, residual robustness and APP (plus the subset's description)."""
    reference = clean_top1(pred)
    out: dict[str, dict[str, Any]] = {}
    for name in pred.names():
        rows = pred.mask(name)
        info = pred.subsets.get(name, {})
        labels, top5 = pred.label[rows], pred.top5[rows]
        top1, top5acc = topk_accuracy(top5, labels, 1), topk_accuracy(top5, labels, 5)
        out[name] = {
            "corruption": info.get("corruption"),
            "severity": info.get("severity"),
            "category": info.get("category"),
            "samples": len(np.unique(pred.key[rows])),
            "images": int(rows.sum()),
            "labelled": int((labels >= 0).sum()),
            "top1": top1,
            "top5": top5acc,
            "error": None if top1 is None else 1 - top1,
            "top5_error": None if top5acc is None else 1 - top5acc,
            "consistency": consistency(pred, rows, reference) if info.get("frames", 1) <= 1 else None,
        }
    clean = out.get(CLEAN, {}).get("top1")
    for row in out.values():
        row["residual_robustness"] = residual_robustness(clean, row["top1"])
        row["app"] = accuracy_preserved(clean, row["top1"])
    return out


def mean_of(rows: dict[str, dict[str, Any]], key: str, names: Sequence[str] | None = None) -> float | None:
    """Mean of ``key`` over the named (default: all non-clean) subsets where it is defined."""
    names = [n for n in rows if n != CLEAN] if names is None else names
    vals = [rows[n][key] for n in names if n in rows and rows[n].get(key) is not None]
    return float(np.mean(vals)) if vals else None


def summary(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Clean accuracy and the mean over corrupted subsets of every per-subset metric (white-box attack subsets are
    rows of their own, not corrupted subsets)."""
    clean = rows.get(CLEAN)
    names = [n for n, r in rows.items() if n != CLEAN and not str(r.get("corruption") or "").startswith(WHITEBOX)]
    return {
        "clean_top1": None if clean is None else clean["top1"],
        "clean_top5": None if clean is None else clean["top5"],
        "corrupted_subsets": len(names),
        **{f"mean_{k}": mean_of(rows, k, names) for k in ("top1", "top5", "error", "consistency",
                                                            "residual_robustness", "app")},
    }  # fmt: skip
