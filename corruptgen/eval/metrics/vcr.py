"""Visually-continuous corruption robustness (Shen et al., WACV 2025, arXiv:2402.19401; §3,
Algorithm 1).

* a_v / p_v: accuracy (f(x') = y) and consistency (f(x') = f(x), x the clean image) per Δv bin; bins with fewer than
  L images are missing (Alg. 1, ``P_j = -1``).
* the curve: a monotone (non-increasing) quantile smoothing spline (Koenker, Ng & Portnoy, Biometrika 1994, the
  paper's [25]; :mod:`.vcr_spline`) by default, or :func:`fit_monotone_spline`, a least-squares smoothing spline
  (``VCRSettings(spline="least-squares")``); both anchored at Δv = 0 to the clean accuracy (accuracy curve) or to 1
  (consistency curve of a deterministic model), as Appendix C asks, and both with 83 % bootstrap bands, pointwise
  and simultaneous (§4.4, App. E.1; :mod:`.vcr_bands`). One curve: :mod:`.vcr_fit`; what it rests on, the refusal
  below a minimum support and the rule at the ends: :mod:`.vcr_support`. The public toolbox instead gives empty
  bins accuracy 0, fits an unconstrained ``UnivariateSpline`` and takes a running minimum, with no anchoring (Shen
  et al., WACV 2025, §3); that is a known defect and is not reproduced.
* R̂ = ∫₀¹ s(v) dv; HMRI = 1 − A^{h>m}/A^h and MRSI = A^{m>h}/A^m (Definitions 1–2); coverage = share of 40
  equal-width Δv bins holding ≥ 20 images (§4.1). A curve below the minimum support has R̂ = ``None`` and a reason,
  and so have HMRI and MRSI computed from it.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import CorruptgenError
from ..predictions import Predictions
from .vcr_fit import (
    GRID,
    PLOT_GRID,
    VCRSettings,
    bin_index,
    bin_performance,
    coverage,
    curve_refits,
    fit_curve,
    vcr_curve,
)
from .vcr_spline import LinearSpline, MonotoneSpline, fit_monotone_spline, fit_quantile_spline

__all__ = ["GRID", "PLOT_GRID", "SIXTEEN_CLASSES", "HumanData", "LinearSpline", "MonotoneSpline", "VCRSettings",
           "bin_index", "bin_performance", "compare_curves", "coverage", "curve_refits", "fit_curve",
           "fit_monotone_spline", "fit_quantile_spline", "human_curves", "human_data_from_rows", "load_human_csv",
           "map_to_16", "probs_to_16", "refusals", "vcr_curve", "vcr_metrics"]  # fmt: skip

# ---- the Geirhos et al. 16 entry-level classes (Shen et al., WACV 2025, §4) ----------------------------------


def _r(a: int, b: int) -> list[int]:
    return list(range(a, b + 1))


#: 16-class category → ImageNet-1k indices (Geirhos et al. ``human_categories.py``; 207 classes in all).
SIXTEEN_CLASSES: dict[str, tuple[int, ...]] = {
    "airplane": (404,),
    "bear": tuple(_r(294, 297)),
    "bicycle": (444, 671),
    "bird": tuple([8, *_r(10, 16), *_r(18, 20), *_r(22, 24), *_r(80, 83), *_r(87, 96), *_r(98, 100), *_r(127, 133),
                   *_r(135, 145)]),
    "boat": (472, 554, 625, 814, 914),
    "bottle": (440, 720, 737, 898, 899, 901, 907),
    "car": (436, 511, 817),
    "cat": tuple(_r(281, 286)),
    "chair": (423, 559, 765, 857),
    "clock": (409, 530, 892),
    "dog": tuple([*_r(152, 191), *_r(193, 203), *_r(205, 226), *_r(228, 241), *_r(243, 250), *_r(252, 257), 259,
                  *_r(261, 263), *_r(265, 268)]),
    "elephant": (385, 386),
    "keyboard": (508, 878),
    "knife": (499,),
    "oven": (766,),
    "truck": (555, 569, 656, 675, 717, 734, 864, 867),
}  # fmt: skip
_INDEX_TO_16 = {i: name for name, idx in SIXTEEN_CLASSES.items() for i in idx}


def map_to_16(indices: Sequence[int] | np.ndarray) -> np.ndarray:
    """ImageNet-1k indices → 16-class names (``None`` outside the 207 classes): the VCR notebook's argmax-then-map."""
    return np.array([_INDEX_TO_16.get(int(i)) for i in np.asarray(indices).reshape(-1)], dtype=object)


def probs_to_16(probs: np.ndarray) -> np.ndarray:
    """Geirhos's ``ImageNetProbabilitiesTo16ClassesMapping``: argmax over the mean probability of each category."""
    names = list(SIXTEEN_CLASSES)
    means = np.stack([probs[:, list(SIXTEEN_CLASSES[n])].mean(axis=1) for n in names], axis=1)
    return np.array([names[i] for i in means.argmax(axis=1)], dtype=object)


# ---- areas ---------------------------------------------------------------------------------------------------------


def compare_curves(model: np.ndarray, human: np.ndarray, grid: np.ndarray = GRID) -> dict[str, float | None]:
    """HMRI and MRSI (Shen et al., WACV 2025, Definitions 1–2) of two curves sampled on ``grid`` (trapezoid areas)."""
    a_m, a_h = float(np.trapezoid(model, grid)), float(np.trapezoid(human, grid))
    a_hm = float(np.trapezoid(np.maximum(human - model, 0), grid))
    a_mh = float(np.trapezoid(np.maximum(model - human, 0), grid))
    return {"A_m": a_m, "A_h": a_h, "A_h>m": a_hm, "A_m>h": a_mh,
            "hmri": 1 - a_hm / a_h if a_h > 0 else None, "mrsi": a_mh / a_m if a_m > 0 else None}  # fmt: skip


# ---- human data -----------------------------------------------------------------------------------------------------


@dataclass
class HumanData:
    """Human trials of one corruption: Δv, the decision on the original and on the corrupted image, the label."""

    delta_v: np.ndarray
    orig_pred: np.ndarray
    transf_pred: np.ndarray
    label: np.ndarray


def _norm(v: str) -> str:
    return v.strip().lower()


def load_human_csv(path: str | os.PathLike) -> dict[str, HumanData]:
    """Read the VCR toolbox's human results CSV (columns ``vd_score, orig_pred, transf_pred, label``; the pilot file's
    ``transformed_pred`` is accepted). With a ``transformation`` column the trials are split per corruption, else they
    are returned under ``"*"``. Decisions and labels are compared as lower-case strings (16-class names)."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            fields = list(reader.fieldnames or [])
    except OSError as e:
        raise CorruptgenError(f"cannot read human data {path}: {e.strerror or e}") from None
    return human_data_from_rows(rows, fields, str(path))


def human_data_from_rows(rows: Sequence[Mapping[str, Any]], fields: Sequence[str] | None = None,
                         where: str = "human data") -> dict[str, HumanData]:  # fmt: skip
    """:func:`load_human_csv` on rows already read (dicts with those columns, e.g. ``DataFrame.to_dict("records")``);
    ``fields``: the column names (default: the first row's)."""
    alias = {"transformed_pred": "transf_pred"}
    need = ["vd_score", "orig_pred", "transf_pred", "label"]
    have = {alias.get(_norm(c), _norm(c)) for c in (fields if fields is not None else (rows[0] if rows else []))}
    missing = [c for c in need if c not in have]
    if missing:
        raise CorruptgenError(f"{where}: human data needs columns {', '.join(need)}; missing {', '.join(missing)}")
    groups: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        row = {alias.get(_norm(k), _norm(k)): ("" if v is None else str(v)) for k, v in row.items() if k is not None}
        groups.setdefault(_norm(row.get("transformation", "")) or "*", []).append(row)
    out = {}
    for name, trials in groups.items():
        try:
            dv = np.array([float(r["vd_score"]) for r in trials])
        except ValueError as e:
            raise CorruptgenError(f"{where}: vd_score must be a number ({e})") from None
        out[name] = HumanData(np.maximum(dv, 0.0), *(np.array([_norm(r[c]) for r in trials], dtype=object)
                                                       for c in ("orig_pred", "transf_pred", "label")))  # fmt: skip
    return out


def human_curves(
    h: HumanData,
    s: VCRSettings,
    name: str = "human",
    *,
    consistency_anchor: float | None = None,
    properties: Sequence[str] = ("a", "p"),
) -> dict[str, Any]:
    """The human accuracy curve ``a`` (anchored at the accuracy on the original images, resampled with the trials in
    the bands) and consistency curve ``p`` (not anchored: the paper anchors s_p at 1 only for deterministic models,
    which ``consistency_anchor=1`` asks for); only those in ``properties``."""
    n = len(h.label)
    out: dict[str, Any] = {"n": n}
    if "a" in properties:
        acc_clean = float((h.orig_pred == h.label).mean()) if n else None
        out["a"] = vcr_curve(h.delta_v, h.transf_pred == h.label, acc_clean, s, anchor_n=n, key=f"{name}/a")
    if "p" in properties:
        out["p"] = vcr_curve(h.delta_v, h.transf_pred == h.orig_pred, consistency_anchor, s, key=f"{name}/p")
    return out


# ---- per-model VCR metrics ------------------------------------------------------------------------------------------


def _public(curve: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in curve.items() if not k.startswith("_")}


def vcr_metrics(
    pred: Predictions,
    *,
    humans: Mapping[str, HumanData] | None = None,
    settings: VCRSettings | None = None,
    human_fits: dict[Any, tuple[HumanData, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """R̂_a, R̂_p, coverage (and HMRI/MRSI when human data match a subset) for every subset carrying Δv.

    ``human_fits``: fitted human curves kept across calls (they do not depend on the model: a report of several
    models fits each human data set once)."""
    s = settings or VCRSettings()
    clean_rows = (pred.subset == "clean") & (pred.frame == 0)
    clean_pred = dict(zip(pred.source_key[clean_rows].tolist(), pred.top1[clean_rows].tolist(), strict=True))
    clean_labels = pred.label[clean_rows]
    n_clean = int((clean_labels >= 0).sum())
    acc_clean = float((pred.top1[clean_rows] == clean_labels)[clean_labels >= 0].mean()) if n_clean else None
    use16 = humans is not None and pred.pred16 is not None
    col16 = pred.pred16_prob if s.sixteen == "probability" else pred.pred16
    out: dict[str, Any] = {"settings": s.to_dict(), "subsets": {}, "notes": []}
    fitted = {} if human_fits is None else human_fits  # (key of ``humans``, settings) -> (its data, its curves)
    for name in pred.names():
        rows = pred.mask(name) & np.isfinite(pred.delta_v)
        if name == "clean" or not rows.any():
            continue
        dv, top1, labels = pred.delta_v[rows], pred.top1[rows], pred.label[rows]
        ref = np.array([clean_pred.get(k, -2) for k in pred.source_key[rows].tolist()])
        hist = np.bincount(bin_index(dv, s.coverage_bins), minlength=s.coverage_bins)
        cov = coverage(dv, n_bins=s.coverage_bins, min_count=s.coverage_min)
        entry: dict[str, Any] = {"n": int(rows.sum()), "delta_v_hist": hist.tolist(), "coverage": cov}
        labelled = labels >= 0
        a = vcr_curve(dv[labelled], top1[labelled] == labels[labelled], acc_clean, s, anchor_n=n_clean,
                      key=f"{name}/a") if labelled.any() else None  # fmt: skip
        has_ref = ref != -2
        p = vcr_curve(dv[has_ref], top1[has_ref] == ref[has_ref], 1.0, s, key=f"{name}/p") if has_ref.any() else None
        entry.update({"R_a": a and a["R"], "R_p": p and p["R"], "curve_a": a and _public(a),
                      "curve_p": p and _public(p)})  # fmt: skip
        refused = {f"R_{k}": c["refused"] for k, c in (("a", a), ("p", p)) if c and c["refused"]}
        if refused:
            entry["refused"] = refused
        corruption = str(pred.subsets.get(name, {}).get("corruption"))
        hkey = next((k for k in (name, corruption, "*") if k in (humans or {})), None)
        if hkey is not None and use16:
            data, fit = fitted.get((hkey, s), (None, None))
            if data is not humans[hkey]:
                data, fit = fitted[(hkey, s)] = humans[hkey], human_curves(humans[hkey], s, f"human/{hkey}")
            entry["human"] = _human_comparison(pred, rows, col16, fit, s, name)
        out["subsets"][name] = entry
    if acc_clean is None:
        out["notes"].append("no labelled clean images: accuracy curves are not anchored")
    if humans and not use16:
        out["notes"].append(
            "human comparison needs 16-class decisions (evaluate a VCR build with an ImageNet-1k model)"
        )
    return out


def _human_comparison(pred: Predictions, rows: np.ndarray, col16: np.ndarray, hc: dict[str, Any], s: VCRSettings,
                      name: str) -> dict[str, Any]:  # fmt: skip
    """Model curves in the 16-class space (images whose label is one of the 207 classes) against the human ones
    (``hc``: :func:`human_curves`)."""
    label16 = map_to_16(pred.label[rows])
    dec = col16[rows]
    clean = (pred.subset == "clean") & (pred.frame == 0)
    clean16 = dict(zip(pred.source_key[clean].tolist(), col16[clean].tolist(), strict=True))
    clean_label16 = map_to_16(pred.label[clean])
    in16 = np.array([v is not None for v in clean_label16])
    anchor = float((col16[clean][in16] == clean_label16[in16]).mean()) if in16.any() else None
    keep = np.array([v is not None for v in label16])
    ref = np.array([clean16.get(k, "\0") for k in pred.source_key[rows].tolist()], dtype=object)
    has_ref = ref != "\0"
    m_a = vcr_curve(pred.delta_v[rows][keep], dec[keep] == label16[keep], anchor, s, anchor_n=int(in16.sum()),
                    key=f"{name}/16/a")  # fmt: skip
    m_p = vcr_curve(pred.delta_v[rows][has_ref], dec[has_ref] == ref[has_ref], 1.0, s, key=f"{name}/16/p")
    out: dict[str, Any] = {"n_human": hc["n"], "n_model_16": int(keep.sum()), "label_space": f"16-class ({s.sixteen})",
                           "model_R_a": m_a["R"], "model_R_p": m_p["R"], "human_R_a": hc["a"]["R"],
                           "human_R_p": hc["p"]["R"]}  # fmt: skip
    refused = {}
    for prop, m in (("a", m_a), ("p", m_p)):
        h = hc[prop]
        why = "; ".join(f"{who} curve: {c['refused']}" for who, c in (("model", m), ("human", h)) if c["refused"])
        if why:
            refused[f"hmri_{prop}"] = refused[f"mrsi_{prop}"] = why
            cmp: dict[str, Any] = {"hmri": None, "mrsi": None}
        else:
            cmp = compare_curves(m["_spline"](GRID), h["_spline"](GRID))
        out.update({f"hmri_{prop}": cmp["hmri"], f"mrsi_{prop}": cmp["mrsi"], f"areas_{prop}": cmp,
                    f"model_curve_{prop}": _public(m), f"human_curve_{prop}": _public(h)})  # fmt: skip
    if refused:
        out["refused"] = refused
    return out


def refusals(metrics: Mapping[str, Any]) -> list[str]:
    """One line per VCR subset whose R̂ (or HMRI/MRSI) was not estimated, with the reason (``corruptgen eval``
    prints them)."""
    lines = []
    for name, e in (metrics.get("subsets") or {}).items():
        why = {**(e.get("refused") or {}), **((e.get("human") or {}).get("refused") or {})}
        if why:
            reasons = list(dict.fromkeys(why.values()))
            lines.append(f"VCR {name}: {', '.join(why)} not estimated: {' | '.join(reasons)}")
    return lines
