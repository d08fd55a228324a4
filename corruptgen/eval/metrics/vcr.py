"""Visually-continuous corruption robustness (Shen et al., WACV 2025, arXiv:2402.19401; §3,
Algorithm 1).

* a_v / p_v: accuracy (f(x') = y) and consistency (f(x') = f(x), x the clean image) per Δv bin; bins with fewer than
  L images are missing (Alg. 1, ``P_j = -1``).
* :func:`fit_monotone_spline`: a monotone (non-increasing) smoothing spline, anchored at Δv = 0 to the clean
  accuracy (accuracy curve) or to 1 (consistency curve of a deterministic model), as Appendix C asks. The public
  toolbox instead gives empty bins accuracy 0, fits an unconstrained ``UnivariateSpline`` and takes a running
  minimum, with no anchoring (Shen et al., WACV 2025, §3); that is a known defect and is not reproduced.
* R̂ = ∫₀¹ s(v) dv; HMRI = 1 − A^{h>m}/A^h and MRSI = A^{m>h}/A^m (Definitions 1–2); coverage = share of 40
  equal-width Δv bins holding ≥ 20 images (§4.1).

Bins: Alg. 1 writes j = ⌊v(M − 1)⌋, which leaves bin M − 1 for Δv = 1 exactly; corruptgen uses M equal-width bins
over [0, 1] (as the coverage definition does), each placed at its centre.
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

GRID = np.linspace(0.0, 1.0, 1001)
PLOT_GRID = np.linspace(0.0, 1.0, 101)

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


# ---- binning, spline, areas -----------------------------------------------------------------------------------------


def bin_index(delta_v: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin of each Δv (clipped to [0, 1]; Δv = max(0, 1 − VIF), so VIF > 1 lands in bin 0)."""
    v = np.clip(np.asarray(delta_v, dtype=np.float64), 0.0, 1.0)
    return np.minimum((v * n_bins).astype(np.int64), n_bins - 1)


def bin_performance(delta_v: np.ndarray, correct: np.ndarray, *, n_bins: int = 40, min_count: int = 20):
    """Per-bin rate of ``correct`` (Alg. 1): (bin centres, rate or NaN for bins under ``min_count``, counts)."""
    ok = np.isfinite(delta_v)
    j = bin_index(delta_v[ok], n_bins)
    count = np.bincount(j, minlength=n_bins)
    hits = np.bincount(j, weights=np.asarray(correct, dtype=np.float64)[ok], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(count >= max(min_count, 1), hits / np.maximum(count, 1), np.nan)
    return (np.arange(n_bins) + 0.5) / n_bins, rate, count


def coverage(delta_v: np.ndarray, *, n_bins: int = 40, min_count: int = 20) -> float:
    """Share of ``n_bins`` equal-width Δv bins holding at least ``min_count`` images (Shen et al., WACV 2025, §4.1)."""
    v = np.asarray(delta_v, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float((np.bincount(bin_index(v, n_bins), minlength=n_bins) >= min_count).mean())


@dataclass(frozen=True)
class MonotoneSpline:
    """A clamped cubic B-spline on [0, 1] with non-increasing coefficients (hence non-increasing), values clipped to
    [0, 1] when evaluated."""

    knots: np.ndarray
    coef: np.ndarray
    degree: int = 3

    def __call__(self, v: np.ndarray | float) -> np.ndarray:
        from scipy.interpolate import BSpline

        x = np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0)
        return np.clip(BSpline(self.knots, self.coef, self.degree, extrapolate=False)(x), 0.0, 1.0)

    def area(self) -> float:
        """∫₀¹ s(v) dv (trapezoid on a 1,001-point grid)."""
        return float(np.trapezoid(self(GRID), GRID))


def fit_monotone_spline(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    anchor: float | None = None,
    n_segments: int = 10,
    degree: int = 3,
    lam: float = 1e-4,
) -> MonotoneSpline:
    r"""Monotone (non-increasing) smoothing spline through points (x, y) with weights w.

    Minimises :math:`\sum_j \bar w_j (y_j - s(x_j))^2 + \lambda \int_0^1 s''(v)^2 dv` (weights normalised to mean
    1) over clamped cubic B-splines with ``n_segments`` equal knot intervals whose coefficients are non-increasing
    (c_0 ≥ c_1 ≥ …, which makes the spline non-increasing), as bounded least squares. With ``anchor``,
    s(0) = c_0 = anchor exactly. The penalty is zero for straight lines, which are reproduced exactly. NaN points are
    ignored; with no point left the curve is the constant anchor (or 0).
    """
    from scipy.interpolate import BSpline
    from scipy.optimize import lsq_linear

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (w > 0)
    x, y, w = np.clip(x[ok], 0, 1), y[ok], w[ok]
    knots = np.r_[np.zeros(degree), np.linspace(0, 1, n_segments + 1), np.ones(degree)]
    k = n_segments + degree
    if len(x) == 0:
        return MonotoneSpline(knots, np.full(k, 0.0 if anchor is None else float(anchor)), degree)
    basis = BSpline.design_matrix(x, knots, degree).toarray()
    t = np.tril(-np.ones((k, k)))  # c = T @ [c0, d1, …, d_{k-1}]: c_i = c0 − Σ_{j≤i} d_j, d ≥ 0
    t[:, 0] = 1.0
    sw = np.sqrt(w / w.mean())
    a_data = sw[:, None] * (basis @ t)
    a_pen = np.sqrt(lam) * (_roughness(knots, degree) @ t)
    if anchor is not None:  # c0 fixed: move its column to the right-hand side (the penalty of a constant is 0)
        a = np.vstack([a_data[:, 1:], a_pen[:, 1:]])
        b = np.r_[sw * (y - float(anchor)), np.zeros(len(a_pen))]
        theta = np.r_[float(anchor), lsq_linear(a, b, bounds=(0.0, np.inf), method="bvls").x]
    else:
        a = np.vstack([a_data, a_pen])
        b = np.r_[sw * y, np.zeros(len(a_pen))]
        theta = lsq_linear(a, b, bounds=(np.r_[-np.inf, np.zeros(k - 1)], np.inf), method="bvls").x
    return MonotoneSpline(knots, t @ theta, degree)


def _roughness(knots: np.ndarray, degree: int, n: int = 400) -> np.ndarray:
    """L with ‖L c‖² ≈ ∫₀¹ s''(v)² dv (midpoint rule on ``n`` points)."""
    from scipy.interpolate import BSpline

    k = len(knots) - degree - 1
    v = (np.arange(n) + 0.5) / n
    d2 = np.stack([BSpline(knots, np.eye(k)[i], degree).derivative(2)(v) for i in range(k)], axis=1)
    return d2 / np.sqrt(n)


def compare_curves(model: np.ndarray, human: np.ndarray, grid: np.ndarray = GRID) -> dict[str, float | None]:
    """HMRI and MRSI (Shen et al., WACV 2025, Definitions 1–2) of two curves sampled on ``grid`` (trapezoid areas)."""
    a_m, a_h = float(np.trapezoid(model, grid)), float(np.trapezoid(human, grid))
    a_hm = float(np.trapezoid(np.maximum(human - model, 0), grid))
    a_mh = float(np.trapezoid(np.maximum(model - human, 0), grid))
    return {"A_m": a_m, "A_h": a_h, "A_h>m": a_hm, "A_m>h": a_mh,
            "hmri": 1 - a_hm / a_h if a_h > 0 else None, "mrsi": a_mh / a_m if a_m > 0 else None}  # fmt: skip


@dataclass(frozen=True)
class VCRSettings:
    """M bins and minimum L per bin (Alg. 1, M = 40), the coverage rule and the spline smoothing."""

    bins: int = 40
    min_per_bin: int = 20
    coverage_bins: int = 40
    coverage_min: int = 20
    n_segments: int = 10
    lam: float = 1e-4
    sixteen: str = "argmax"  # how a 1000-way decision becomes a 16-class one when comparing with humans

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def vcr_curve(delta_v: np.ndarray, correct: np.ndarray, anchor: float | None, s: VCRSettings) -> dict[str, Any]:
    """Fit one VCR curve: per-bin rates, the anchored monotone spline, R̂ (its area) and a 101-point sampling."""
    x, rate, count = bin_performance(delta_v, correct, n_bins=s.bins, min_count=s.min_per_bin)
    spline = fit_monotone_spline(x, rate, count, anchor=anchor, n_segments=s.n_segments, lam=s.lam)
    used = int(np.isfinite(rate).sum())
    return {"R": spline.area(), "anchor": anchor, "bins_used": used, "grid": spline(PLOT_GRID).round(6).tolist(),
            "bins": {"x": x.round(6).tolist(), "y": [None if not np.isfinite(v) else float(v) for v in rate],
                     "count": count.tolist()}, "_spline": spline}  # fmt: skip


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
            fields = [_norm(c) for c in reader.fieldnames or []]
    except OSError as e:
        raise CorruptgenError(f"cannot read human data {path}: {e.strerror or e}") from None
    alias = {"transformed_pred": "transf_pred"}
    need = ["vd_score", "orig_pred", "transf_pred", "label"]
    have = {alias.get(c, c) for c in fields}
    missing = [c for c in need if c not in have]
    if missing:
        raise CorruptgenError(f"{path}: human data needs columns {', '.join(need)}; missing {', '.join(missing)}")
    groups: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        row = {alias.get(_norm(k), _norm(k)): (v or "") for k, v in row.items() if k is not None}
        groups.setdefault(_norm(row.get("transformation", "")) or "*", []).append(row)
    out = {}
    for name, trials in groups.items():
        try:
            dv = np.array([float(r["vd_score"]) for r in trials])
        except ValueError as e:
            raise CorruptgenError(f"{path}: vd_score must be a number ({e})") from None
        out[name] = HumanData(np.maximum(dv, 0.0), *(np.array([_norm(r[c]) for r in trials], dtype=object)
                                                       for c in ("orig_pred", "transf_pred", "label")))  # fmt: skip
    return out


def human_curves(h: HumanData, s: VCRSettings) -> dict[str, Any]:
    """The human accuracy curve (anchored at the accuracy on the original images) and consistency curve (not
    anchored: the paper anchors s_p at 1 only for deterministic models)."""
    acc_clean = float((h.orig_pred == h.label).mean()) if len(h.label) else None
    return {"n": len(h.label), "a": vcr_curve(h.delta_v, h.transf_pred == h.label, acc_clean, s),
            "p": vcr_curve(h.delta_v, h.transf_pred == h.orig_pred, None, s)}  # fmt: skip


# ---- per-model VCR metrics ------------------------------------------------------------------------------------------


def _public(curve: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in curve.items() if not k.startswith("_")}


def vcr_metrics(
    pred: Predictions, *, humans: Mapping[str, HumanData] | None = None, settings: VCRSettings | None = None
) -> dict[str, Any]:
    """R̂_a, R̂_p, coverage (and HMRI/MRSI when human data match a subset) for every subset carrying Δv."""
    s = settings or VCRSettings()
    clean_rows = (pred.subset == "clean") & (pred.frame == 0)
    clean_pred = dict(zip(pred.source_key[clean_rows].tolist(), pred.top1[clean_rows].tolist(), strict=True))
    clean_labels = pred.label[clean_rows]
    acc_clean = float((pred.top1[clean_rows] == clean_labels)[clean_labels >= 0].mean()) if (
        clean_labels >= 0).any() else None  # fmt: skip
    use16 = humans is not None and pred.pred16 is not None
    col16 = pred.pred16_prob if s.sixteen == "probability" else pred.pred16
    out: dict[str, Any] = {"settings": s.to_dict(), "subsets": {}, "notes": []}
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
        a = vcr_curve(dv[labelled], top1[labelled] == labels[labelled], acc_clean, s) if labelled.any() else None
        has_ref = ref != -2
        p = vcr_curve(dv[has_ref], top1[has_ref] == ref[has_ref], 1.0, s) if has_ref.any() else None
        entry.update({"R_a": a and a["R"], "R_p": p and p["R"], "curve_a": a and _public(a),
                      "curve_p": p and _public(p)})  # fmt: skip
        human = (humans or {}).get(name) or (humans or {}).get(str(pred.subsets.get(name, {}).get("corruption"))) or (
            humans or {}).get("*")  # fmt: skip
        if human is not None and use16:
            entry["human"] = _human_comparison(pred, rows, col16, human, s)
        out["subsets"][name] = entry
    if acc_clean is None:
        out["notes"].append("no labelled clean images: accuracy curves are not anchored")
    if humans and not use16:
        out["notes"].append(
            "human comparison needs 16-class decisions (evaluate a VCR build with an ImageNet-1k model)"
        )
    return out


def _human_comparison(pred: Predictions, rows: np.ndarray, col16: np.ndarray, h: HumanData, s: VCRSettings):
    """Model curves in the 16-class space (images whose label is one of the 207 classes) against the human ones."""
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
    m_a = vcr_curve(pred.delta_v[rows][keep], dec[keep] == label16[keep], anchor, s)
    m_p = vcr_curve(pred.delta_v[rows][has_ref], dec[has_ref] == ref[has_ref], 1.0, s)
    hc = human_curves(h, s)
    ca = compare_curves(m_a["_spline"](GRID), hc["a"]["_spline"](GRID))
    cp = compare_curves(m_p["_spline"](GRID), hc["p"]["_spline"](GRID))
    return {"n_human": hc["n"], "n_model_16": int(keep.sum()), "label_space": f"16-class ({s.sixteen})",
            "model_R_a": m_a["R"], "model_R_p": m_p["R"], "human_R_a": hc["a"]["R"], "human_R_p": hc["p"]["R"],
            "hmri_a": ca["hmri"], "mrsi_a": ca["mrsi"], "hmri_p": cp["hmri"], "mrsi_p": cp["mrsi"],
            "areas_a": ca, "areas_p": cp, "model_curve_a": _public(m_a), "model_curve_p": _public(m_p),
            "human_curve_a": _public(hc["a"]), "human_curve_p": _public(hc["p"])}  # fmt: skip
