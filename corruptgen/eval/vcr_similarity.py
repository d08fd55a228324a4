"""Visually similar corruption functions (Shen et al., WACV 2025, §4.4, Fig. 8, Fig. 12, App. E.1).

Two corruption functions are *visually similar* for an observer (humans, or one model) when their VCR curves do not
differ significantly. The paper's test is whether the 83 % confidence intervals of the two spline curves overlap: two
independent estimates whose 83.4 % intervals do not overlap differ at about the 5 % level — for one point. Applied
at every Δv of a curve it calls far more pairs different (the 101 grid points are many tests), and the overlap of two
simultaneous bands far fewer. Here the same 5 % is kept for the whole curve (``metrics.vcr_bands.difference_test``): the
difference of the two fits, standardised by its bootstrap standard error, against the 95 % quantile of its sup
over paired bootstrap refits (``--bands simultaneous``, default); ``--bands pointwise`` tests each Δv alone at 5 %
(the paper's rule point by point). Curves are the monotone quantile splines of :mod:`corruptgen.eval.metrics.vcr` on
their 101-point Δv grid, and their refits are recomputed from the bins stored with them (the same draws as their
bands):

* per pair and property (accuracy s_a, consistency s_p): the Δv ranges where they differ significantly (the paper's
  model question, e.g. Gaussian vs uniform noise for Δv > 0.8) and where they do not, within the range both curves
  have data for (from 0 — the anchor — or the first usable bin of an unanchored curve, up to the upper edge of the
  last usable bin of each);
* a verdict: similar when they differ nowhere in the compared range, for every property;
* classes: the connected components of the "similar" graph, and its maximal cliques (a class whose members are all
  pairwise similar is a clique; the paper's noise and blur classes are).

A curve without an estimate (below the minimum support) is skipped, with its reason.

Inputs (any mix): the toolbox's human CSVs (``transformation, vd_score, orig_pred, transf_pred, label``, as ``--human``
reads them); toolbox-style model tables (the same columns plus ``model``, like the toolbox's eval_results.csv: one
observer per model, consistency anchored at 1); results files of ``corruptgen eval`` (their stored curves and bands);
a :class:`~corruptgen.eval.predictions.Predictions` table; a pandas DataFrame in the CSV layout; ``{function:
HumanData}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from .metrics.vcr import PLOT_GRID, HumanData, VCRSettings, curve_refits, human_curves, human_data_from_rows
from .metrics.vcr_bands import difference_test
from .predictions import Predictions

PROPERTIES = ("a", "p")
BAND_KINDS = ("simultaneous", "pointwise")
TOLERANCE = 1e-9
ALPHA = 0.05

Curves = Mapping[str, Mapping[str, Mapping[str, Any]]]  # function -> property -> curve (grid, band, bins)


def runs(mask: np.ndarray, grid: np.ndarray = PLOT_GRID) -> list[list[float]]:
    """The maximal runs of True in ``mask`` as [first Δv, last Δv] of the grid points in each run."""
    out, start = [], None
    for i, on in enumerate(np.r_[np.asarray(mask, dtype=bool), False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            out.append([round(float(grid[start]), 6), round(float(grid[i - 1]), 6)])
            start = None
    return out


def data_range(curve: Mapping[str, Any]) -> tuple[float, float]:
    """The Δv range a curve has data for: from 0 (anchored) or its first usable bin, to the upper edge of its last
    usable bin; (0, 0) without any. Curves of older results files (no ``support``): 0 to the last bin with data."""
    if "support" not in curve:
        bins = curve.get("bins") or {}
        xs = [x for x, y in zip(bins.get("x", []), bins.get("y", []), strict=False) if y is not None]
        return 0.0, (min(1.0, max(xs) + 0.5 / len(bins["x"])) if xs else 0.0)
    sup = (curve.get("support") or {}).get("range")
    if sup is None:
        return 0.0, 0.0
    return (0.0 if curve.get("anchor") is not None else float(sup[0])), float(sup[1])


def compare_curves(a: Mapping[str, Any], b: Mapping[str, Any], grid: np.ndarray = PLOT_GRID,
                   within: tuple[float, float] | None = None, kind: str = "simultaneous",
                   alpha: float = ALPHA) -> dict[str, Any]:  # fmt: skip
    """Where two curves differ at level ``alpha`` (over ``within``, default: the Δv range both have data for):
    ``differ`` and ``overlap`` (no significant difference) ranges, the share of compared points without a difference,
    the critical value of the standardised difference and the verdict ``similar``."""
    if within is None:
        (alo, ahi), (blo, bhi) = data_range(a), data_range(b)
        span = (max(alo, blo), min(ahi, bhi))
    else:
        span = within
    if span[1] <= span[0]:
        return {"compared": None, "overlap": [], "differ": [], "overlap_share": None, "similar": False,
                "critical_value": None, "alpha": alpha}  # fmt: skip
    inside = (grid >= span[0] - TOLERANCE) & (grid <= span[1] + TOLERANCE)
    fa, fb = (np.asarray(c["grid"], dtype=np.float64) for c in (a, b))
    differ, q = difference_test(curve_refits(a), fa, curve_refits(b), fb, alpha=alpha, mask=inside,
                                simultaneous=kind == "simultaneous")  # fmt: skip
    n = int(inside.sum())
    return {"compared": [round(span[0], 6), round(span[1], 6)], "overlap": runs(~differ & inside, grid),
            "differ": runs(differ, grid), "overlap_share": float((~differ & inside).sum() / n) if n else None,
            "similar": bool(n and not differ.any()), "critical_value": round(q, 6), "alpha": alpha}  # fmt: skip


def compare_pair(a: Mapping[str, Any], b: Mapping[str, Any], *, within: tuple[float, float] | None = None,
                 bands: str = "simultaneous", alpha: float = ALPHA) -> dict[str, Any]:  # fmt: skip
    """:func:`compare_curves` with both tests (under ``pointwise`` and ``simultaneous``); the top-level fields
    (``similar``, ``overlap``, ``differ``, ...) are those of ``bands``."""
    both = {k: compare_curves(a, b, within=within, kind=k, alpha=alpha) for k in BAND_KINDS}
    return {**both[bands], "bands": bands, **both}


def classes(names: Sequence[str], similar: set[frozenset[str]]) -> tuple[list[list[str]], list[list[str]]]:
    """Connected components and maximal cliques (≥ 2 members, Bron–Kerbosch) of the graph "similar"."""
    adj = {n: {m for m in names if m != n and frozenset((n, m)) in similar} for n in names}
    seen: set[str] = set()
    comps = []
    for n in names:
        if n in seen:
            continue
        stack, comp = [n], []
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                comp.append(v)
                stack.extend(adj[v] - seen)
        comps.append(sorted(comp, key=names.index))
    cliques: list[list[str]] = []

    def grow(r: set[str], p: set[str], x: set[str]) -> None:
        if not p and not x:
            if len(r) > 1:
                cliques.append(sorted(r, key=names.index))
            return
        pivot = max(p | x, key=lambda v: len(adj[v] & p))
        for v in sorted(p - adj[pivot], key=names.index):
            grow(r | {v}, p & adj[v], x & adj[v])
            p, x = p - {v}, x | {v}

    grow(set(), set(names), set())
    return comps, sorted(cliques, key=lambda c: names.index(c[0]))


def similarity(curves: Curves, *, properties: Sequence[str] = PROPERTIES, within: tuple[float, float] | None = None,
               bands: str = "simultaneous", alpha: float = ALPHA) -> dict[str, Any]:  # fmt: skip
    """Every pair of functions of one observer: the test per property, the verdict, the classes that follow;
    ``skipped``: the functions without a curve for some property, with the reason."""
    skipped = {}
    for n in curves:
        why = [f"s_{p}: {(curves[n].get(p) or {}).get('refused') or 'no curve'}" for p in properties
               if not curves[n].get(p) or curves[n][p].get("R") is None]  # fmt: skip
        if why:
            skipped[n] = "; ".join(why)
    names = [n for n in curves if n not in skipped]
    pairs, similar = [], set()
    per_prop: dict[str, set[frozenset[str]]] = {p: set() for p in properties}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            by = {
                p: compare_pair(curves[a][p], curves[b][p], within=within, bands=bands, alpha=alpha) for p in properties
            }
            entry = {"functions": [a, b], "similar": all(v["similar"] for v in by.values()), "by_property": by}
            for p in properties:
                if by[p]["similar"]:
                    per_prop[p].add(frozenset((a, b)))
            if entry["similar"]:
                similar.add(frozenset((a, b)))
            pairs.append(entry)
    comps, cliques = classes(names, similar)
    return {"functions": {n: {p: {"R": curves[n][p]["R"], "bins_used": curves[n][p].get("bins_used"),
                                  "spline": curves[n][p].get("spline")} for p in properties} for n in names},
            "skipped": skipped, "pairs": pairs, "classes": comps, "cliques": cliques,
            "classes_by_property": {p: classes(names, per_prop[p])[0] for p in properties}}  # fmt: skip


def pair(result: Mapping[str, Any], a: str, b: str) -> dict[str, Any]:
    """The entry of the pair (a, b) in a :func:`similarity` result (either order): ``functions``, ``similar`` and
    ``by_property[p]`` = :func:`compare_pair` of property p."""
    for e in result["pairs"]:
        if set(e["functions"]) == {a, b}:
            return e
    raise KeyError(f"no pair {a!r}, {b!r}")


# ---- inputs ---------------------------------------------------------------------------------------------------------


def curves_from_trials(
    trials: Mapping[str, HumanData],
    settings: VCRSettings | None = None,
    observer: str = "human",
    model: bool = False,
    properties: Sequence[str] = PROPERTIES,
) -> dict[str, dict[str, Any]]:
    """Fit the accuracy and consistency curves (with bands) of each function's trials: the accuracy curve anchored
    at the accuracy on the originals; the consistency curve unanchored (humans) or at 1 (``model``: deterministic)."""
    s = settings or VCRSettings()
    out = {}
    for name, h in trials.items():
        c = human_curves(h, s, f"{observer}/{name}", consistency_anchor=1.0 if model else None, properties=properties)
        out[name] = {p: c[p] for p in properties}
    return out


def curves_from_results(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The stored curves (``curve_a``, ``curve_p``) of every VCR subset of a results file."""
    subsets = (results.get("metrics") or {}).get("vcr", {}).get("subsets", {})
    return {n: {"a": e.get("curve_a"), "p": e.get("curve_p")} for n, e in subsets.items()}


def load_inputs(inputs: Any, settings: VCRSettings | None = None,
                properties: Sequence[str] = PROPERTIES) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    """Curves per observer from the accepted inputs (see the module docstring); trials are fitted for
    ``properties`` only."""
    from .metrics.vcr import vcr_metrics
    from .report import collect

    items = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    observers: dict[str, dict[str, dict[str, Any]]] = {}
    trials: dict[str, HumanData] = {}

    def add(observer: str, curves: dict[str, dict[str, Any]]) -> None:
        name, k = observer, 2
        while name in observers:
            name, k = f"{observer} ({k})", k + 1
        observers[name] = curves

    for item in items:
        if isinstance(item, (str, os.PathLike)) and str(item).lower().endswith(".csv"):
            for model, rows in _toolbox_csv(item).items():
                if model is None:
                    for fn, h in human_data_from_rows(rows, where=str(item)).items():
                        _add_trials(trials, Path(item).stem if fn == "*" else fn, h)
                else:
                    fitted = curves_from_trials(human_data_from_rows(rows, where=str(item)), settings, model, True,
                                                properties)  # fmt: skip
                    add(model, fitted)
        elif isinstance(item, (str, os.PathLike)):
            for r in collect([item]):
                add(r["model"]["name"], curves_from_results(r))
        elif isinstance(item, Predictions):
            metrics = vcr_metrics(item, settings=settings)
            add(str(item.meta.get("model") or "model"), curves_from_results({"metrics": {"vcr": metrics}}))
        elif isinstance(item, Mapping) and "metrics" in item:
            add(item.get("model", {}).get("name", "model"), curves_from_results(item))
        elif isinstance(item, Mapping) and all(isinstance(v, HumanData) for v in item.values()):
            for fn, h in item.items():
                _add_trials(trials, fn, h)
        elif hasattr(item, "to_dict"):  # a pandas DataFrame in the toolbox CSV layout
            for fn, h in human_data_from_rows(item.to_dict("records"), list(item.columns)).items():
                _add_trials(trials, fn, h)
        else:
            raise CorruptgenError(f"cannot read VCR curves from {type(item).__name__}")
    if trials:
        observers = {"human": curves_from_trials(trials, settings, properties=properties), **observers}
    return observers


def _toolbox_csv(path: str | os.PathLike) -> dict[str | None, list[dict[str, str]]]:
    """Rows of a toolbox CSV by its ``model`` column (the toolbox's eval_results.csv), or all under None (humans)."""
    import csv

    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            fields = [c.strip().lower() for c in reader.fieldnames or []]
    except OSError as e:
        raise CorruptgenError(f"cannot read {path}: {e.strerror or e}") from None
    if not rows:
        raise CorruptgenError(f"{path} holds no rows")
    if "model" not in fields:
        return {None: rows}
    column = next(c for c in reader.fieldnames or [] if c.strip().lower() == "model")
    out: dict[str | None, list[dict[str, str]]] = {}
    for row in rows:
        out.setdefault(row[column].strip() or "model", []).append(row)
    return out


def _add_trials(trials: dict[str, HumanData], name: str, h: HumanData) -> None:
    if name in trials:
        raise CorruptgenError(f"human data for {name!r} given twice")
    trials[name] = h


def vcr_similarity(
    inputs: Any,
    *,
    out: str | os.PathLike | None = None,
    settings: VCRSettings | None = None,
    properties: Sequence[str] = PROPERTIES,
    within: tuple[float, float] | None = None,
    bands: str = "simultaneous",
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Visually similar functions of each observer in ``inputs`` (module docstring), judged by the ``bands`` test
    (``simultaneous``: the whole curve at level ``alpha``, default; ``pointwise``: each Δv at ``alpha``) over
    ``within`` (default: the Δv range both curves have data for). With ``out``: writes ``vcr-similarity.json`` and
    one Fig. 8-style plot per observer and property there. Returns ``{"levels": band levels seen, "bands", "alpha",
    "properties", "observers": {observer: :func:`similarity`}}``;
    each observer's ``_curves`` holds the curves compared (not written)."""
    bad = [p for p in properties if p not in PROPERTIES]
    if bad or not properties:
        raise CorruptgenError(f"properties must be among {', '.join(PROPERTIES)}, got {', '.join(properties)}")
    if bands not in BAND_KINDS:
        raise CorruptgenError(f"bands must be one of {', '.join(BAND_KINDS)}, got {bands!r}")
    if not 0 < alpha < 1:
        raise CorruptgenError(f"alpha must lie in (0, 1), got {alpha}")
    observers = load_inputs(inputs, settings, properties)
    if not observers:
        raise CorruptgenError("no VCR curves in the inputs")
    levels = sorted({c[p]["band"]["level"] for curves in observers.values() for c in curves.values()
                     for p in properties if c.get(p) and c[p].get("band")})  # fmt: skip
    result: dict[str, Any] = {"levels": levels, "bands": bands, "alpha": alpha, "properties": list(properties),
                              "observers": {}}  # fmt: skip
    for name, curves in observers.items():
        found = similarity(curves, properties=properties, within=within, bands=bands, alpha=alpha)
        result["observers"][name] = {**found, "_curves": curves}
    if out is not None:
        result["plots"] = _write(result, Path(out))
    return result


def _write(result: dict[str, Any], out: Path) -> list[str]:
    from .results import slug, write_json
    from .vcr_similarity_plot import similarity_figure

    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, obs in result["observers"].items():
        for p in result["properties"]:
            files.append(similarity_figure(obs, p, name, out / f"vcr-similarity-{slug(name)}-{p}.png").name)
    public = {**result, "observers": {n: {k: v for k, v in o.items() if not k.startswith("_")}
                                      for n, o in result["observers"].items()}, "plots": files}  # fmt: skip
    write_json(out / "vcr-similarity.json", public)
    return files
