"""ImageNet-Syn2Nat metrics and analyses (Laugros, Caplier, Ospici, BMVC 2021, §4–§5, and its reference code).

* :func:`syn2nat_metrics`: the Syn2Nat score (unweighted mean top-1 over the 18 corruptions) and per-category means.
* :func:`overlap_matrix`: the overlapping score of Eq. 1 from an accuracy matrix.
* :func:`kmeans` / :func:`find_categories`: K-means++ (numpy, seeded, ``n_init`` restarts) with the paper's stopping
  rule: k = 2, 3, … until the mean Pearson correlation of same-cluster overlap vectors exceeds 0.5.
* :func:`benchmark_correlations`: Algorithm 2, Pearson r (scipy) between residual robustness to a natural-shift
  benchmark and to each synthetic benchmark, averaged over the benchmarks.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import CorruptgenError

#: The 18 ImageNet-Syn2Nat corruptions (``test_inet_syn2nat.py``), used if the syn2nat family cannot be imported.
_SYN2NAT_18 = ("solarize", "random_sun_flare", "random_shadow", "affines", "perspective", "cutout", "sharpen",
               "random_rain", "emboss", "random_contrast", "random_brightness", "random_gamma", "iso_noise",
               "downscale", "posterize", "color_jitter", "channel_dropout", "to_sepia")  # fmt: skip


def syn2nat_members() -> tuple[tuple[str, ...], dict[str, int | None], dict[int, str]]:
    """(the 18 names, name → category 1–6 from the corruption registry, category names)."""
    try:
        from ...corruptions import get
        from ...families.syn2nat.corruptions import CATEGORY_NAMES, SYN2NAT_18
    except ImportError:  # pragma: no cover - the family ships with corruptgen
        return _SYN2NAT_18, dict.fromkeys(_SYN2NAT_18), {}
    return SYN2NAT_18, {n: get(f"syn2nat/{n}").category for n in SYN2NAT_18}, dict(CATEGORY_NAMES)


def syn2nat_metrics(rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Syn2Nat score = mean top-1 over the 18 (``test_inet_syn2nat.py``), its mean residual robustness,
    and mean top-1 per category (categories from ``corruptgen.corruptions.get(name).category``)."""
    names, category_of, category_names = syn2nat_members()
    present = [n for n in names if rows.get(n, {}).get("top1") is not None]
    missing = [n for n in names if n not in present]
    score = float(np.mean([rows[n]["top1"] for n in present])) if present else None
    rr = [rows[n]["residual_robustness"] for n in present if rows[n].get("residual_robustness") is not None]
    cats: dict[str, Any] = {}
    for n in present:
        cat = category_of.get(n) or rows[n].get("category")
        if cat is None:
            continue
        entry = cats.setdefault(str(cat), {"name": category_names.get(int(cat), ""), "corruptions": [], "top1": None})
        entry["corruptions"].append(n)
    for entry in cats.values():
        entry["top1"] = float(np.mean([rows[n]["top1"] for n in entry["corruptions"]]))
    notes = [f"score over {len(present)} of the 18 corruptions (missing: {', '.join(missing)})"] if missing else []
    return {"score": score, "n_corruptions": len(present), "complete": not missing, "missing": missing,
            "mean_residual_robustness": float(np.mean(rr)) if rr else None,
            "categories": dict(sorted(cats.items())), "notes": notes}  # fmt: skip


# ---- overlapping scores ---------------------------------------------------------------------------------------------


def overlap_matrix(acc: np.ndarray, *, mode: str = "ratio") -> tuple[np.ndarray, int]:
    """Overlapping scores (Laugros et al., BMVC 2021, Eq. 1) of the n corruptions of an (n+1)×(n+1) accuracy matrix.

    ``acc[m, c]``: top-1 of the model trained with corruption m (row 0: the standard model trained on clean data) on
    the test set corrupted with c (column 0: clean). For i ≠ j ≥ 1:

    .. math::
        O_{ij} = \\max\\Big(0, \\tfrac12\\Big[\\frac{R_{ij} - R_{0j}}{R_{jj} - R_{0j}}
                 + \\frac{R_{ji} - R_{0i}}{R_{ii} - R_{0i}}\\Big]\\Big)

    with ``mode="ratio"`` (the paper): R[m, c] = acc[m, c] / acc[m, clean]; ``mode="accuracy"``: R = acc, as the
    BMVC reference code ``get_overlapping_matrix.py`` computes it. The diagonal is 1. A term with a zero
    denominator (training on c did not change robustness to c) is undefined and counted as 0.

    Returns:
        (the n×n matrix, the number of undefined terms).
    """
    a = np.asarray(acc, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 3:
        raise CorruptgenError(f"the accuracy matrix must be square with a clean row/column and >= 2 corruptions, "
                              f"got shape {a.shape}")  # fmt: skip
    if mode == "ratio":
        if (a[:, 0] <= 0).any():
            raise CorruptgenError("ratio mode needs a positive clean accuracy for every model")
        r = a / a[:, :1]
    elif mode == "accuracy":
        r = a
    else:
        raise CorruptgenError(f"unknown overlap mode {mode!r} (ratio or accuracy)")
    gain = r[1:, 1:] - r[0:1, 1:]  # gain[i, j] = R_ij − R_0j (i, j corruption indices)
    own = np.diag(gain)  # R_jj − R_0j
    with np.errstate(divide="ignore", invalid="ignore"):
        term = gain / own[None, :]  # term[i, j] = (R_ij − R_0j) / (R_jj − R_0j)
    undefined = ~np.isfinite(term)
    term = np.where(undefined, 0.0, term)
    o = np.maximum(0.0, 0.5 * (term + term.T))
    np.fill_diagonal(o, 1.0)
    off = ~np.eye(len(o), dtype=bool)
    return o, int((undefined & off).sum())


# ---- K-means++ and the category search ------------------------------------------------------------------------------


def _sq_dist(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.maximum((x * x).sum(1)[:, None] - 2 * x @ c.T + (c * c).sum(1)[None, :], 0.0)


def _kmeans_once(x: np.ndarray, k: int, rng: np.random.Generator, max_iter: int, tol: float):
    n = len(x)
    centers = np.empty((k, x.shape[1]))
    centers[0] = x[rng.integers(n)]
    d2 = _sq_dist(x, centers[:1])[:, 0]
    for j in range(1, k):  # k-means++: sample proportionally to the squared distance to the nearest centre
        total = d2.sum()
        idx = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
        centers[j] = x[idx]
        d2 = np.minimum(d2, _sq_dist(x, centers[j : j + 1])[:, 0])
    labels = np.full(n, -1)
    for _ in range(max_iter):
        dist = _sq_dist(x, centers)
        new = dist.argmin(1)
        counts = np.bincount(new, minlength=k)
        for empty in np.flatnonzero(counts == 0):  # re-seed an empty cluster with the worst-served point
            far = int(dist[np.arange(n), new].argmax())
            new[far] = empty
            dist[far] = 0
        moved = np.zeros(k)
        for j in range(k):
            c = x[new == j].mean(0)
            moved[j] = ((c - centers[j]) ** 2).sum()
            centers[j] = c
        converged = (new == labels).all() or moved.max() <= tol
        labels = new
        if converged:
            break
    inertia = float(_sq_dist(x, centers)[np.arange(n), labels].sum())
    return labels, centers, inertia


def kmeans(x: np.ndarray, k: int, *, n_init: int = 100, max_iter: int = 1000, seed: int = 0, tol: float = 1e-10):
    """K-means with k-means++ seeding and ``n_init`` restarts (the lowest inertia wins); seeded, numpy only.

    Stands in for sklearn ``KMeans(n_clusters=k, n_init=100, max_iter=1000)`` of ``get_corruption_clusters.py``
    (reference code), which sets no random_state; here the result depends only on ``seed``.

    Returns:
        (labels (n,), centres (k, d), inertia).
    """
    x = np.asarray(x, dtype=np.float64)
    if not 1 <= k <= len(x):
        raise CorruptgenError(f"k must be in 1..{len(x)}, got {k}")
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(max(1, n_init)):
        run = _kmeans_once(x, k, rng, max_iter, tol)
        if best is None or run[2] < best[2] - 1e-12:
            best = run
    labels, centers, inertia = best
    # canonical numbering: clusters in order of their first member
    order = list(dict.fromkeys(labels.tolist()))
    remap = {old: new for new, old in enumerate(order)}
    return np.array([remap[v] for v in labels.tolist()]), centers[order], inertia


def same_cluster_correlation(vectors: np.ndarray, labels: np.ndarray) -> float | None:
    """Mean Pearson correlation between the vectors of every ordered pair of distinct same-cluster members."""
    corr = np.corrcoef(np.asarray(vectors, dtype=np.float64))
    same = (labels[:, None] == labels[None, :]) & ~np.eye(len(labels), dtype=bool)
    vals = corr[same]
    vals = vals[np.isfinite(vals)]
    return float(vals.mean()) if len(vals) else None


def find_categories(
    overlap: np.ndarray, *, threshold: float = 0.5, k_max: int | None = None, n_init: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Cluster the overlap vectors with K-means for k = 2, 3, …; stop at the first k whose mean same-cluster
    correlation exceeds ``threshold`` (Laugros et al., BMVC 2021, §4; the code tests correlations although its
    docstring says "overlapping score"). If none does up to ``k_max`` (default n − 1), the last k is kept and
    ``stopped`` is False."""
    o = np.asarray(overlap, dtype=np.float64)
    k_max = min(k_max or len(o) - 1, len(o))
    history, labels, stopped = [], None, False
    for k in range(2, k_max + 1):
        labels, _, inertia = kmeans(o, k, n_init=n_init, seed=seed)
        score = same_cluster_correlation(o, labels)
        history.append({"k": k, "mean_same_cluster_correlation": score, "inertia": inertia})
        if score is not None and score > threshold:
            stopped = True
            break
    if labels is None:
        raise CorruptgenError("need at least 3 corruptions to search for categories")
    return {"k": int(labels.max() + 1), "labels": labels, "stopped": stopped, "threshold": threshold,
            "history": history}  # fmt: skip


# ---- Algorithm 2 ----------------------------------------------------------------------------------------------------


UNITS = ("percent", "fraction")


def to_fraction(
    table: Mapping[str, Mapping[str, float]], unit: str, name: str = "table"
) -> dict[str, dict[str, float]]:
    """Accuracies as fractions, from a table in the declared ``unit`` (``"percent"`` or ``"fraction"``).

    The unit is never guessed (a percent table whose values are all small would be read as fractions): values
    outside the unit's range (above 1 for fractions, above 100 for percent, or negative) are an error."""
    if unit not in UNITS:
        raise CorruptgenError(f"the unit of the {name} accuracies must be 'percent' or 'fraction', got {unit!r}")
    values = [v for row in table.values() for v in row.values() if v is not None and math.isfinite(v)]
    top = 1.0 if unit == "fraction" else 100.0
    bad = [v for v in values if not 0 <= v <= top]
    if bad:
        hint = " (percentages? pass --unit percent)" if unit == "fraction" and max(bad) <= 100 else ""
        raise CorruptgenError(f"{name} accuracies declared as {unit} hold {bad[0]:g}, outside [0, {top:g}]{hint}")
    scale = 0.01 if unit == "percent" else 1.0
    return {m: {c: v * scale for c, v in row.items()} for m, row in table.items()}


def benchmark_correlations(
    synthetic: Mapping[str, Mapping[str, float]],
    natural: Mapping[str, Mapping[str, float]],
    benchmarks: Sequence[Sequence[str]],
    *,
    synthetic_unit: str,
    natural_unit: str,
) -> dict[str, Any]:
    """Algorithm 2 (Laugros et al., BMVC 2021, §5): for each natural-shift benchmark NB (a column of ``natural``),
    the mean over the synthetic benchmarks sb of Pearson r between the models' residual robustness to NB and to sb.

    Tables map model → {column: accuracy}, each with a ``clean`` column (``natural`` may omit it: the synthetic clean
    accuracy is used). The residual robustness to sb is the mean over its corruptions of clean − acc. Each table's
    unit is declared, ``"percent"`` or ``"fraction"`` (:func:`to_fraction`; the authors' code mixed the two). The
    returned r is the mean over **all** benchmarks with its mean p-value (the authors' code averaged the last
    benchmark's r only); this follows the paper.
    """
    from scipy.stats import pearsonr

    syn = to_fraction(synthetic, synthetic_unit, "synthetic")
    nat = to_fraction(natural, natural_unit, "natural")
    models = [m for m in syn if m in nat]
    if len(models) < 3:
        raise CorruptgenError(f"Algorithm 2 needs at least 3 models in both tables, found {len(models)} in common")
    if any("clean" not in syn[m] for m in models):
        raise CorruptgenError("the synthetic table needs a 'clean' column (clean accuracy of every model)")
    if not benchmarks:
        raise CorruptgenError("no synthetic benchmark to correlate")
    columns = set.intersection(*(set(syn[m]) for m in models))
    for bench in benchmarks:
        unknown = [c for c in bench if c not in columns]
        if unknown:
            raise CorruptgenError(f"benchmark corruption(s) not in the synthetic table: {', '.join(unknown)}")
    clean_syn = np.array([syn[m]["clean"] for m in models])
    synth_rr = np.array([[np.mean([clean_syn[i] - syn[m][c] for c in bench]) for i, m in enumerate(models)]
                         for bench in benchmarks])  # fmt: skip
    out: dict[str, Any] = {}
    nat_cols = [c for c in nat[models[0]] if c != "clean" and all(c in nat[m] for m in models)]
    if not nat_cols:
        raise CorruptgenError("the natural table has no benchmark column shared by all models")
    for col in nat_cols:
        clean_nat = np.array([nat[m].get("clean", syn[m]["clean"]) for m in models])
        nat_rr = clean_nat - np.array([nat[m][col] for m in models])
        rs, ps = [], []
        for rr in synth_rr:
            if np.ptp(rr) == 0 or np.ptp(nat_rr) == 0:
                rs.append(float("nan"))
                ps.append(float("nan"))
                continue
            r, p = pearsonr(nat_rr, rr)
            rs.append(float(r))
            ps.append(float(p))
        out[col] = {"mean_r": float(np.nanmean(rs)) if np.isfinite(rs).any() else None,
                    "mean_p": float(np.nanmean(ps)) if np.isfinite(ps).any() else None,
                    "n_benchmarks": len(benchmarks), "r": rs, "p": ps}  # fmt: skip
    notes = [f"{name} accuracies were declared as percent; converted to fractions" for name, unit in
             (("synthetic", synthetic_unit), ("natural", natural_unit)) if unit == "percent"]  # fmt: skip
    return {"models": models, "natural": out, "units": {"synthetic": synthetic_unit, "natural": natural_unit},
            "notes": notes}  # fmt: skip


# ---- CSV tables -----------------------------------------------------------------------------------------------------


def read_table(path: str | os.PathLike) -> tuple[list[str], list[str], np.ndarray]:
    """A CSV with a header row of column names (first cell: anything) and one row per model: (rows, cols, values)."""
    try:
        with open(path, newline="") as f:
            lines = [r for r in csv.reader(f) if r and any(cell.strip() for cell in r)]
    except OSError as e:
        raise CorruptgenError(f"cannot read {path}: {e.strerror or e}") from None
    if len(lines) < 2 or len(lines[0]) < 2:
        raise CorruptgenError(f"{path}: expected a header row and at least one data row")
    cols = [c.strip() for c in lines[0][1:]]
    rows, values = [], []
    for i, line in enumerate(lines[1:], start=2):
        if len(line) != len(cols) + 1:
            raise CorruptgenError(f"{path}:{i}: expected {len(cols) + 1} cells, got {len(line)}")
        rows.append(line[0].strip())
        try:
            values.append([float(v) for v in line[1:]])
        except ValueError as e:
            raise CorruptgenError(f"{path}:{i}: {e}") from None
    return rows, cols, np.array(values, dtype=np.float64)


def read_named_table(path: str | os.PathLike) -> dict[str, dict[str, float]]:
    rows, cols, vals = read_table(path)
    return {r: dict(zip(cols, v.tolist(), strict=True)) for r, v in zip(rows, vals, strict=True)}


def accuracy_matrix_from_csv(path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """Read a corruption-trained accuracy matrix (rows: training corruption, ``clean`` = standard model; columns: test
    corruption, ``clean`` included); returns (corruption names, the matrix with clean first, rows aligned to cols)."""
    rows, cols, vals = read_table(path)
    if "clean" not in rows or "clean" not in cols:
        raise CorruptgenError(f"{path}: needs a 'clean' row (standard model) and a 'clean' column (clean test set)")
    names = [c for c in cols if c != "clean"]
    missing = sorted(set(names) ^ set(r for r in rows if r != "clean"))
    if missing:
        raise CorruptgenError(f"{path}: rows and columns must name the same corruptions; unmatched: "
                              f"{', '.join(missing)}")  # fmt: skip
    order = ["clean", *names]
    ri = [rows.index(n) for n in order]
    ci = [cols.index(n) for n in order]
    return names, vals[np.ix_(ri, ci)]
