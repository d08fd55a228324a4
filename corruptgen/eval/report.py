"""Multi-model reports: tables and rankings in ``report.md``, CSV tables and PNG plots, from results files.

``corruptgen report results/*.json --out report/`` reads the results of one or more models (possibly on several
builds), optionally recomputes every metric from the saved predictions (``--recompute``, e.g. with a different
reference or human data), adds the analyses that need several models (fitted effective robustness, Kendall τ of model
rankings) and writes ``report.md``, ``top1.csv`` (models × subsets, the accuracy-matrix layout ``corruptgen analyze``
reads), ``summary.csv`` and ``plots/*.png``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from . import plots, thesis_tables
from .metrics import MetricOptions, compute_metrics
from .metrics.common import effective_robustness
from .metrics.optics import kendall_rankings
from .predictions import Predictions
from .results import json_safe, load_results, slug

RECOMPUTED_SUFFIX = ".recomputed.json"

#: The headline metric of each family: (label, where, higher is better).
PRIMARY = {
    "syn2nat": ("Syn2Nat score", ("syn2nat", "score"), True),
    "imagenet_c": ("mCE", ("imagenet_c", "mce"), False),
    "c_reference": ("mCE", ("c_reference", "mce"), False),
    "imagenet_p": ("mFP", ("imagenet_p", "mFP"), False),
    "vcr": ("mean R̂_a", ("vcr", "_mean_R_a"), True),
    "optics": ("mean Δ to defocus", ("optics", "_mean_delta"), True),
    "generic": ("mean top-1", ("summary", "mean_top1"), True),
}


def collect(paths: Sequence[str | os.PathLike]) -> list[dict[str, Any]]:
    """Results files from paths or directories (``results-*.json`` inside)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():  # recomputed copies are read only when named explicitly
            files.extend(f for f in sorted(p.glob("results-*.json")) if not f.name.endswith(RECOMPUTED_SUFFIX))
        elif p.exists():
            files.append(p)
        else:
            raise CorruptgenError(f"no results file at {p}")
    if not files:
        raise CorruptgenError("no results files given (expected results-<model>.json from corruptgen eval)")
    return [load_results(f) for f in files]


def recomputed_path(result: dict[str, Any]) -> Path:
    """Where ``report --recompute`` saves a recomputed result: ``results-<model>.recomputed.json`` next to the
    original (so its predictions file stays where the result says)."""
    path = Path(result.get("_path") or f"results-{slug(result['model']['name'])}.json")
    if path.name.endswith(RECOMPUTED_SUFFIX):
        return path
    return path.with_name(path.name.removesuffix(".json") + RECOMPUTED_SUFFIX)


def recompute(result: dict[str, Any], options: MetricOptions) -> dict[str, Any]:
    """The same result with its metrics recomputed from its predictions file."""
    name = result.get("predictions")
    if not name:
        raise CorruptgenError(f"{result.get('_path')}: no predictions were saved (eval ran with --no-predictions)")
    path = Path(result.get("_path", ".")).parent / name
    if not path.exists():
        raise CorruptgenError(f"predictions file {path} is missing")
    pred = Predictions.from_parquet(path)
    family = result["metrics"].get("family") or pred.meta.get("family", "generic")
    return {**result, "metrics": json_safe(compute_metrics(pred, family, options)), "recomputed": True,
            "recomputed_from": Path(result.get("_path", "")).name}  # fmt: skip


def _get(metrics: dict[str, Any], where: tuple[str, str]) -> float | None:
    if where[1] == "_mean_delta":
        vals = list((metrics.get("optics") or {}).get("delta", {}).values())
        return float(np.mean(vals)) if vals else None
    if where[1] == "_mean_R_a":
        vals = [v.get("R_a") for v in metrics.get("vcr", {}).get("subsets", {}).values() if v.get("R_a") is not None]
        return float(np.mean(vals)) if vals else None
    return (metrics.get(where[0]) or {}).get(where[1])


def _pct(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else _num(100 * v, digits)


def _num(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{round(v, digits) + 0.0:.{digits}f}"  # + 0.0: what rounds to zero is not -0.0


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(r) + " |" for r in rows), ""]  # fmt: skip


def multi_model(results: Sequence[dict[str, Any]], options: MetricOptions | None = None) -> dict[str, Any]:
    """Analyses over several models of one build: effective robustness (β given, or fitted when ≥ 3 models) and
    Kendall τ (OpticsBench, ≥ 3 models)."""
    out: dict[str, Any] = {}
    opt = options or MetricOptions()
    clean = [r["metrics"]["subsets"].get("clean", {}).get("top1") for r in results]
    if all(c is not None for c in clean) and (len(results) >= 3 or opt.er_beta is not None):
        names = [n for n in results[0]["metrics"]["subsets"] if n != "clean"]
        er: dict[str, Any] = {}
        for name in names:
            acc = [r["metrics"]["subsets"].get(name, {}).get("top1") for r in results]
            if any(a is None for a in acc):
                continue
            try:
                vals, beta, b = effective_robustness(clean, acc, beta=opt.er_beta,
                                                     intercept=opt.er_intercept, logit=opt.er_logit)  # fmt: skip
            except CorruptgenError:
                continue
            er[name] = {"beta": beta, "intercept": b, "er": dict(zip([r["model"]["name"] for r in results],
                                                                     vals.tolist(), strict=True))}  # fmt: skip
        if er:
            out["effective_robustness"] = {"fitted": opt.er_beta is None, "logit": opt.er_logit, "subsets": er}
    if results[0]["metrics"].get("family") == "optics" and len(results) >= 3:
        top1 = {r["model"]["name"]: {n: v.get("top1") for n, v in r["metrics"]["subsets"].items()} for r in results}
        out["kendall_tau"] = kendall_rankings(top1)
    return out


def write_report(
    results: Sequence[dict[str, Any]], out: str | os.PathLike, *, options: MetricOptions | None = None
) -> list[Path]:
    """Write ``report.md``, ``summary.csv``, ``top1-<benchmark>.csv`` and ``plots/*.png``; returns the files."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        key = r["data"].get("plan_id") or r["data"].get("benchmark") or r["data"]["source"]
        groups.setdefault(str(key), []).append(r)
    md = ["# corruptgen evaluation report", ""]
    files: list[Path] = []
    summary_rows = []
    for rs in groups.values():
        lines, fs, srows = _group(rs, out, options)
        md.extend(lines)
        files.extend(fs)
        summary_rows.extend(srows)
    # the thesis's tables span builds: one row per model, columns from each build
    thesis, thesis_files = thesis_tables.render(results, out, _table)
    md.extend(thesis)
    files.extend(thesis_files)
    spath = out / "summary.csv"
    with open(spath, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["benchmark", "model", "clean_top1", "mean_top1", "mean_residual_robustness", "mean_app",
                    "mean_consistency", "primary_metric", "primary_value", "rank"])  # fmt: skip
        w.writerows(summary_rows)
    rpath = out / "report.md"
    rpath.write_text("\n".join(md) + "\n")
    return [rpath, spath, *files]


def _group(rs: list[dict[str, Any]], out: Path, options) -> tuple[list[str], list[Path], list[list]]:
    data, fam = rs[0]["data"], rs[0]["metrics"].get("family", "generic")
    bench = data.get("benchmark") or Path(str(data["source"])).name
    tag = slug(str(bench))
    label, where, higher = PRIMARY.get(fam, PRIMARY["generic"])
    prim = [_get(r["metrics"], where) for r in rs]
    if all(p is None for p in prim):  # e.g. no mCE without a reference: rank by mean top-1
        label, where, higher = PRIMARY["generic"]
        prim = [_get(r["metrics"], where) for r in rs]
    own = where != PRIMARY["generic"][1]  # the headline gets a column unless it is the mean top-1 column
    order = sorted(range(len(rs)), key=lambda i: (prim[i] is None, -(prim[i] or 0) if higher else (prim[i] or 0)))
    rank = {i: k + 1 for k, i in enumerate(order)}
    lines = [f"## {bench} ({fam}, {len(rs)} model{'s' if len(rs) > 1 else ''})", "",
             f"Source `{data['source']}`, plan `{data.get('plan_id')}`, {len(data.get('shards') or {})} shards "
             f"(sha256 {'verified against the manifest' if data.get('checksums_verified') else 'recorded'}).",
             ""]  # fmt: skip
    srows, table = [], []
    for i in order:
        r, s = rs[i], rs[i]["metrics"]["summary"]
        table.append([str(rank[i]), r["model"]["name"], _pct(s["clean_top1"]), _pct(s["mean_top1"]),
                      _pct(s["mean_residual_robustness"]),
                      thesis_tables.UNDEFINED if s["clean_top1"] == 0 else _num(s["mean_app"]),
                      _num(s["mean_consistency"]),
                      *([_pct(prim[i])] if own else [])])  # fmt: skip
        srows.append([bench, r["model"]["name"], s["clean_top1"], s["mean_top1"], s["mean_residual_robustness"],
                      s["mean_app"], s["mean_consistency"], label, prim[i], rank[i]])  # fmt: skip
    lines += ["### Summary and ranking", ""]
    lines += _table(["rank", "model", "clean top-1 %", "mean top-1 %", "mean RR (pts)", "mean APP",
                     "mean consistency", *([label + " %"] if own else [])], table)  # fmt: skip
    names = list(dict.fromkeys(n for r in rs for n in r["metrics"]["subsets"]))
    counts = {n: _labelled(rs, n) for n in names}
    labelled, images = (sum(c[i] for c in counts.values()) for i in (0, 1))
    lines += ["### Top-1 accuracy per subset (%)", "",
              f"{labelled} of {images} images carried a label (top-1 is over labelled images only; n/a: no labelled "
              f"image in the subset; {plots.NOT_EVALUATED}: the model was not run on it).", ""]  # fmt: skip
    lines += _table(
        ["subset", "labelled / images", *(r["model"]["name"] for r in rs)],
        [[n, f"{counts[n][0]} / {counts[n][1]}", *(_top1_cell(r, n) for r in rs)] for n in names],
    )
    lines += _family_sections(rs, fam)
    extra = multi_model(rs, options)
    if "effective_robustness" in extra:
        er = extra["effective_robustness"]
        how = "fitted over these models" if er["fitted"] else "given"
        lines += [f"### Effective robustness (acc − (β·clean + b), β {how}{', logit' if er['logit'] else ''})", ""]
        lines += _table(["subset", "β", "b", *(r["model"]["name"] for r in rs)],
                        [[n, _num(v["beta"]), _num(v["intercept"]), *(_pct(v["er"][r["model"]["name"]]) for r in rs)]
                         for n, v in er["subsets"].items()])  # fmt: skip
    if "kendall_tau" in extra:
        kt = extra["kendall_tau"]
        lines += [f"### Kendall τ of model rankings vs the defocus baseline (mean τ {_num(kt['mean_tau'])})", ""]
        lines += _table(
            ["subset", "τ", "p", "models"],
            [[n, _num(v["tau"]), _num(v["p"], 4), str(v["models"])] for n, v in kt["subsets"].items()],
        )
    files = _plots(rs, out, tag, fam)
    files.append(_acc_matrix(rs, out / f"top1-{tag}.csv", names))
    if files:
        lines += ["### Plots", "", *(f"![{p.stem}]({p.relative_to(out).as_posix()})" for p in files
                                     if p.suffix == ".png"), ""]  # fmt: skip
    notes = sorted({n for r in rs for n in _notes(r["metrics"])})
    if notes:
        lines += ["### Notes", "", *(f"- {n}" for n in notes), ""]
    return lines, files, srows


def _top1_cell(result: dict[str, Any], name: str) -> str:
    row = result["metrics"]["subsets"].get(name)
    if row is None:
        return plots.NOT_EVALUATED
    return "n/a" if row.get("top1") is None else _pct(row["top1"])


def _labelled(rs: list[dict[str, Any]], name: str) -> tuple[int, int]:
    """(labelled images, images) of a subset, from the first result that has it (the same data for every model)."""
    row = next(r["metrics"]["subsets"][name] for r in rs if name in r["metrics"]["subsets"])
    return int(row.get("labelled") or 0), int(row.get("images") or 0)


def _notes(m: dict[str, Any]) -> list[str]:
    out = list(m.get("notes", []))
    for key in ("imagenet_c", "syn2nat", "vcr", "optics"):
        out += (m.get(key) or {}).get("notes", [])
    if m.get("imagenet_p"):
        out.append(f"ImageNet-P normalisation: {m['imagenet_p']['normalisation']}")
    if m.get("imagenet_c"):
        out.append(f"CE denominators: {m['imagenet_c']['reference']} ({m['imagenet_c']['denominator_set']})")
    return out


def _family_sections(rs: list[dict[str, Any]], fam: str) -> list[str]:
    lines: list[str] = []
    names = [r["model"]["name"] for r in rs]
    if fam == "syn2nat":
        cats = list(dict.fromkeys(c for r in rs for c in r["metrics"]["syn2nat"]["categories"]))
        lines += ["### Syn2Nat score and category means (top-1 %)", ""]
        rows = [["score", *(_pct(r["metrics"]["syn2nat"]["score"]) for r in rs)]]
        for c in cats:
            cat = next(
                r["metrics"]["syn2nat"]["categories"][c] for r in rs if c in r["metrics"]["syn2nat"]["categories"]
            )
            rows.append([f"C{c} {cat['name']}", *(_pct(r["metrics"]["syn2nat"]["categories"].get(c, {}).get("top1"))
                                                  for r in rs)])  # fmt: skip
        lines += _table(["", *names], rows)
    elif fam == "imagenet_c":
        corrs = list(dict.fromkeys(c for r in rs for c in r["metrics"]["imagenet_c"]["corruptions"]))
        lines += ["### Corruption errors (CE %, relative CE % in brackets)", ""]
        rows = [[c, *(_ce(r["metrics"]["imagenet_c"]["corruptions"].get(c)) for r in rs)] for c in corrs]
        rows.append(["**mCE**", *(f"{_pct(r['metrics']['imagenet_c']['mce'], 1)} "
                                  f"({_pct(r['metrics']['imagenet_c']['relative_mce'], 1)})" for r in rs)])  # fmt: skip
        lines += _table(["corruption", *names], rows)
    elif fam == "imagenet_p":
        subs = list(dict.fromkeys(s for r in rs for s in r["metrics"]["imagenet_p"]["perturbations"]))
        lines += ["### Flip probability % / top-5 distance", ""]
        rows = [[s, *(_fp(r["metrics"]["imagenet_p"]["perturbations"].get(s)) for r in rs)] for s in subs]
        rows.append(
            [
                "**mFP / mT5D**",
                *(
                    f"{_pct(r['metrics']['imagenet_p']['mFP'])} / "
                    f"{_num(r['metrics']['imagenet_p']['mT5D_unnormalized'])}"
                    for r in rs
                ),
            ]
        )
        rows.append(
            [
                "**mFR / mT5D (normalised)**",
                *(
                    f"{_pct(r['metrics']['imagenet_p']['mFR'], 1)} / {_pct(r['metrics']['imagenet_p']['mT5D'], 1)}"
                    for r in rs
                ),
            ]
        )
        lines += _table(["perturbation", *names], rows)
    elif fam == "vcr":
        subs = list(dict.fromkeys(s for r in rs for s in r["metrics"]["vcr"]["subsets"]))
        lines += ["### VCR: R̂_a / R̂_p, coverage; HMRI / MRSI against humans when human data were given", "",
                  _vcr_estimator(rs[0]["metrics"]["vcr"].get("settings") or {}), ""]  # fmt: skip
        rows = []
        for s in subs:
            for r in rs:
                e = r["metrics"]["vcr"]["subsets"].get(s)
                if not e:
                    continue
                h = e.get("human") or {}
                rows.append([s, r["model"]["name"], _num(e["R_a"]), _num(e["R_p"]), _pct(e["coverage"], 1),
                             _num(h.get("hmri_a")), _num(h.get("mrsi_a")), _num(h.get("hmri_p")),
                             _num(h.get("mrsi_p"))])  # fmt: skip
        lines += _table(["subset", "model", "R̂_a", "R̂_p", "coverage %", "HMRI_a", "MRSI_a", "HMRI_p", "MRSI_p"], rows)
        from .metrics.vcr import refusals

        why = [f"* {r['model']['name']}: {line}" for r in rs for line in refusals(r["metrics"]["vcr"])]
        lines += ["", "Not estimated (–), below the minimum support:", "", *why] if why else []
    elif fam == "optics":
        subs = list(dict.fromkeys(s for r in rs for s in r["metrics"]["optics"]["delta"]))
        lines += ["### Δ to the defocus-disk baseline (top-1 points, Eq. 3)", ""]
        lines += _table(["subset", *names], [[s, *(_pct(r["metrics"]["optics"]["delta"].get(s)) for r in rs)]
                                             for s in subs])  # fmt: skip
    return lines


def _vcr_estimator(s: dict[str, Any]) -> str:
    """How the curves were fitted (older results without these settings used the least-squares spline)."""
    lam = s.get("lam")
    rule = "λ by SIC per curve" if lam == "sic" else f"λ = {lam:g}" if isinstance(lam, (int, float)) else "λ default"
    if s.get("spline", "least-squares") == "least-squares":
        what = f"least-squares monotone spline, {rule}"
    else:
        what = f"monotone quantile spline τ = {s.get('tau', 0.5):g}, {rule}"
    bands = f"{100 * s.get('band_level', 0.83):g} % bands from {s['band_resamples']} resamples" if s.get(
        "band_resamples") else "no bands"  # fmt: skip
    need = f"; estimated with ≥ {s['min_support']:.0%} of the Δv bins usable" if "min_support" in s else ""
    return f"Curves: {what}; {bands}{need}."


def _ce(v: dict | None) -> str:
    return "–" if not v else f"{_pct(v['ce'], 1)} ({_pct(v['relative_ce'], 1)})"


def _fp(v: dict | None) -> str:
    return "–" if not v else f"{_pct(v['flip_probability'])} / {_num(v['top5_distance'])}"


def _acc_matrix(rs: list[dict[str, Any]], path: Path, names: list[str]) -> Path:
    """Models × subsets top-1 (fractions), ``clean`` first: the CSV layout of ``corruptgen analyze``."""
    cols = (["clean"] if "clean" in names else []) + [n for n in names if n != "clean"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", *cols])
        for r in rs:
            w.writerow([r["model"]["name"], *(_cell(r["metrics"]["subsets"].get(c, {}).get("top1")) for c in cols)])
    return path


def _cell(v: float | None) -> str:
    return "" if v is None else f"{v:.6f}"


def _plots(rs: list[dict[str, Any]], out: Path, tag: str, fam: str) -> list[Path]:
    made = [plots.accuracy_bars(rs, out / "plots" / f"{tag}-accuracy.png"),
            plots.accuracy_vs_severity(rs, out / "plots" / f"{tag}-accuracy-vs-severity.png")]  # fmt: skip
    if fam == "vcr":
        for s in list(dict.fromkeys(s for r in rs for s in r["metrics"]["vcr"]["subsets"])):
            made.append(plots.vcr_curves(rs, s, out / "plots" / f"{tag}-vcr-{slug(s)}.png"))
        made.append(plots.delta_v_histograms(rs, out / "plots" / f"{tag}-delta-v.png"))
    return [p for p in made if p is not None]
