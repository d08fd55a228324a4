"""ImageNet-P stability: flip probability (FP), top-5 distance (T5D), mFR and mT5D (Hendrycks & Dietterich, ICLR 2019,
arXiv:1903.12261; reference ``ImageNet-P/test.py`` ``flip_prob`` and ``ranking_dist(mode='top5')``
§1.5).

Pairs of frames: noise sequences compare every frame with frame 0; the others compare frames ``t`` and ``t + d``
(consecutive frames at stride ``d`` = the difficulty). Each video's mean over its pairs is averaged over videos.

The top-5 distance of a pair (a, b) is :math:`\\sum_{k=0}^{4} |k - \\min(r_b(c_k), 5)|`, where :math:`c_k` is the
class ranked k-th (0-based) in frame a and :math:`r_b` its 0-based rank in frame b: the reference's
``|cum_sum_top5[:5] - cum_sum_top5[sigma - 1][:5]|`` with ``cum_sum_top5[i] = min(i, 5)``. Only the top 5 of each
frame matter, so the stored top-5 predictions give the exact value.

mFR and mT5D divide each perturbation's FP (T5D) by a reference model's and average. The AlexNet FP/T5D values of the
paper are **not available** in corruptgen's sources (the shared specs only give the ResNet-50 leaderboard numbers), so
without a reference results file only the unnormalised means (mFP, mT5D_unnormalized) are reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..predictions import Predictions

NOT_AVAILABLE = ("AlexNet flip probabilities / top-5 distances are not available in corruptgen's sources; pass a "
                 "reference model's results file (--reference) to normalise")  # fmt: skip


def _pairs(n_frames: int, compare: str, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (a, b) of the compared frame pairs of one video."""
    if compare == "first":
        b = np.arange(1, n_frames)
        return np.zeros_like(b), b
    a = np.arange(0, max(n_frames - stride, 0))
    return a, a + stride


def flip_probability(videos: Sequence[np.ndarray], compare: str = "consecutive", stride: int = 1) -> float | None:
    """FP: mean over videos of the share of compared frame pairs whose top-1 prediction differs.

    Args:
        videos: one (T,) array of top-1 predictions per video.
        compare: ``"first"`` (noise: every frame vs frame 0) or ``"consecutive"`` (frames t, t + stride).
    """
    per_video = []
    for preds in videos:
        a, b = _pairs(len(preds), compare, stride)
        if len(a):
            per_video.append(float((preds[a] != preds[b]).mean()))
    return float(np.mean(per_video)) if per_video else None


def top5_distance_pairs(top_a: np.ndarray, top_b: np.ndarray) -> np.ndarray:
    """Top-5 distance of each pair: ``top_a``/``top_b`` are (P, 5) class indices by decreasing score."""
    match = top_a[:, :, None] == top_b[:, None, :]  # (P, 5, 5): class k of frame a is at position j of frame b
    rank_b = np.where(match.any(axis=2), match.argmax(axis=2), 5)  # min(rank, 5)
    return np.abs(np.arange(5)[None, :] - rank_b).sum(axis=1)


def top5_distance(videos: Sequence[np.ndarray], compare: str = "consecutive", stride: int = 1) -> float | None:
    """T5D: mean over videos of the mean top-5 distance of the compared pairs; ``videos`` are (T, 5) arrays."""
    per_video = []
    for top in videos:
        a, b = _pairs(len(top), compare, stride)
        if len(a):
            per_video.append(float(top5_distance_pairs(top[a], top[b]).mean()))
    return float(np.mean(per_video)) if per_video else None


def sequence_settings(name: str, info: Mapping[str, Any]) -> tuple[str, int]:
    """(compare, stride) of a subset: from the sample params when recorded, else by the reference's rule (noise
    sequences vs frame 0, others consecutive at stride = difficulty)."""
    compare = info.get("compare")
    if compare not in ("first", "consecutive"):
        corruption = str(info.get("corruption") or name)
        compare = "first" if "noise" in corruption else "consecutive"
    stride = 1 if compare == "first" else int(info.get("stride") or info.get("difficulty") or 1)
    return compare, max(stride, 1)


def imagenet_p_metrics(pred: Predictions, reference: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """FP and T5D per sequence subset, and their means; normalised by ``reference`` (``{subset: {"flip_probability",
    "top5_distance"}}`` of a reference model, e.g. AlexNet) when given."""
    per: dict[str, Any] = {}
    for name in pred.names():
        info = pred.subsets.get(name, {})
        rows = np.flatnonzero(pred.mask(name))
        if int(info.get("frames", 1)) <= 1 and not (pred.frame[rows] > 0).any():
            continue  # the clean subset or single images
        compare, stride = sequence_settings(name, info)
        keys = pred.key[rows]
        order = np.lexsort((pred.frame[rows], keys.astype(str)))
        rows, keys = rows[order], keys[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        groups = np.split(rows, starts[1:])
        fp = flip_probability([pred.top1[g] for g in groups], compare, stride)
        t5d = top5_distance([pred.top5[g] for g in groups], compare, stride)
        entry = {"perturbation": info.get("corruption") or name, "difficulty": info.get("severity"),
                 "compare": compare, "stride": stride, "videos": len(groups), "flip_probability": fp,
                 "top5_distance": t5d, "flip_rate": None, "top5_distance_rate": None}  # fmt: skip
        ref = (reference or {}).get(name)
        if ref:
            if ref.get("flip_probability") and fp is not None:
                entry["flip_rate"] = fp / ref["flip_probability"]
            if ref.get("top5_distance") and t5d is not None:
                entry["top5_distance_rate"] = t5d / ref["top5_distance"]
        per[name] = entry

    def mean(key: str) -> float | None:
        vals = [v[key] for v in per.values() if v[key] is not None]
        return float(np.mean(vals)) if vals else None

    return {
        "perturbations": per,
        "mFP": mean("flip_probability"),
        "mT5D_unnormalized": mean("top5_distance"),
        "mFR": mean("flip_rate"),
        "mT5D": mean("top5_distance_rate"),
        "normalisation": "reference results file" if reference else NOT_AVAILABLE,
    }
