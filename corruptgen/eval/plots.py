"""PNG plots of evaluation results (matplotlib, Agg backend): per-subset accuracy bars, accuracy vs severity, VCR
curves with the human curve and the shaded HMRI/MRSI areas, Δv histograms, and the overlap heatmap with categories."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError

_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")  # fmt: skip


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise CorruptgenError("plots need matplotlib: pip install matplotlib") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | os.PathLike) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return path


def accuracy_bars(results: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path | None:
    """Top-1 per subset for each model: a corruption × severity heat map when the subsets form that grid, else
    horizontal grouped bars (the clean subset first and hatched)."""
    fig = accuracy_bars_figure(results)
    return None if fig is None else _save(fig, path)


#: Width (percentage points) of the outlined stub drawn for a 0 % accuracy, so the bar is visible.
ZERO_STUB = 0.6
#: Label of a subset a model was not run on (``n/a`` is a subset without labelled images).
NOT_EVALUATED = "not evaluated"


def accuracy_bars_figure(results: Sequence[Mapping[str, Any]]):
    """The figure of :func:`accuracy_bars`: a 0 % accuracy is an outlined stub labelled ``0%``, a missing one (no
    labelled image) is labelled ``n/a``, a subset the model was not run on ``not evaluated``; the legend explains
    the hatched ``clean`` bar. Subsets that are all ``<corruption>`` at a severity give :func:`accuracy_heatmap`."""
    names = list(dict.fromkeys(n for r in results for n in r["metrics"]["subsets"]))
    if not names:
        return None
    grid = severity_grid(results)
    if grid is not None:
        return accuracy_heatmap(results, *grid)
    plt = _plt()
    from matplotlib.patches import Patch

    n, m = len(names), len(results)
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.28 * n * max(1, m) ** 0.5))
    height = 0.8 / m
    y = np.arange(n)
    for j, r in enumerate(results):
        rows = r["metrics"]["subsets"]
        top1 = [rows.get(s, {}).get("top1") for s in names]
        pos = y + (j - (m - 1) / 2) * height
        vals = np.array([ZERO_STUB if v == 0 else 100 * (v or 0.0) for v in top1])
        bars = ax.barh(pos, vals, height=height * 0.95, color=_COLORS[j % 10])
        for bar, v, yy, name in zip(bars, top1, pos, names, strict=True):
            if name == "clean":
                bar.set_hatch("//")
            if v == 0:
                bar.set(edgecolor="black", linewidth=0.8)
            if v is None or v == 0:
                text = "0%" if v == 0 else ("n/a" if name in rows else NOT_EVALUATED)
                ax.text(1.2, yy, text, va="center", fontsize=7)
    handles = [Patch(facecolor=_COLORS[j % 10], label=r["model"]["name"]) for j, r in enumerate(results)]
    if "clean" in names:
        handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="//", label="clean (uncorrupted reference)"))
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("top-1 accuracy (%)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Top-1 accuracy per subset — {_where(results)}")
    return fig


def _where(results: Sequence[Mapping[str, Any]]) -> str:
    return results[0]["data"].get("benchmark") or results[0]["data"]["source"]


def _corruption(name: str, row: Mapping[str, Any]) -> str:
    return str(row.get("corruption") or name.rsplit("_s", 1)[0]).split("/")[-1]


def severity_grid(results: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[int]] | None:
    """(corruptions, severities) when every subset but ``clean`` is one corruption at one severity (one subset per
    cell) and some corruption has several severities, else ``None``."""
    cells: dict[str, set[int]] = {}
    for r in results:
        seen = set()
        for name, row in r["metrics"]["subsets"].items():
            if name == "clean":
                continue
            cell = (_corruption(name, row), row.get("severity"))
            if cell[1] is None or cell in seen:
                return None
            seen.add(cell)
            cells.setdefault(cell[0], set()).add(int(cell[1]))
    if not cells or max(len(s) for s in cells.values()) < 2:
        return None
    return list(cells), sorted(set().union(*cells.values()))


def accuracy_heatmap(results: Sequence[Mapping[str, Any]], corruptions: Sequence[str], severities: Sequence[int]):
    """One corruption × severity panel of top-1 per model (value in each cell; ``n/a`` on grey: no labelled image;
    blank: not evaluated), the clean top-1 in the panel title."""
    plt = _plt()
    index = {c: i for i, c in enumerate(corruptions)}
    sev = {s: j for j, s in enumerate(severities)}
    cols = min(3, len(results))
    nrows = -(-len(results) // cols)
    width, height = 0.3 + 0.55 * len(severities), 1.3 + 0.27 * len(corruptions)
    fig, axes = plt.subplots(nrows, cols, figsize=(width * cols + 2.6, height * nrows), squeeze=False, sharey=True)
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("white")
    image = None
    for ax, r in zip(axes.flat, results, strict=False):
        values = np.full((len(corruptions), len(severities)), np.nan)
        missing = np.zeros(values.shape, dtype=bool)
        for name, row in r["metrics"]["subsets"].items():
            if name != "clean":
                i, j = index[_corruption(name, row)], sev[int(row["severity"])]
                values[i, j] = np.nan if row.get("top1") is None else 100 * row["top1"]
                missing[i, j] = row.get("top1") is None
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
        for (i, j), v in np.ndenumerate(values):
            if missing[i, j]:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, color="0.85"))
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=7)
            elif not np.isnan(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=7, color="white" if v < 55 else "black")
        ax.set_xticks(range(len(severities)), [str(s) for s in severities], fontsize=8)
        ax.set_yticks(range(len(corruptions)), corruptions, fontsize=8)
        ax.tick_params(labelleft=ax in axes[:, 0])  # corruption names once per row of panels
        ax.set_xlabel("severity", fontsize=8)
        clean = r["metrics"]["subsets"].get("clean", {}).get("top1")
        ax.set_title(f"{r['model']['name']} (clean {'n/a' if clean is None else f'{100 * clean:.1f}%'})", fontsize=9)
    for ax in axes.flat[len(results) :]:
        ax.axis("off")
    fig.suptitle(f"Top-1 accuracy (%) — {_where(results)}; blank: not evaluated", fontsize=10)
    fig.colorbar(image, ax=axes.ravel().tolist(), fraction=0.04, pad=0.02, label="top-1 accuracy (%)")
    return fig


def accuracy_vs_severity(results: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path | None:
    """One panel per model: top-1 against severity for each corruption (severity 0 = clean)."""
    fig = accuracy_vs_severity_figure(results)
    return None if fig is None else _save(fig, path)


def accuracy_vs_severity_figure(results: Sequence[Mapping[str, Any]]):
    """The figure of :func:`accuracy_vs_severity`; a line is broken at a severity that was not evaluated (only the
    evaluated points are drawn there)."""
    per_model = []
    for r in results:
        rows = r["metrics"]["subsets"]
        lines: dict[str, dict[int, float]] = {}
        for name, row in rows.items():
            if row.get("severity") is not None and row.get("top1") is not None and name != "clean":
                lines.setdefault(row.get("corruption") or name.rsplit("_s", 1)[0], {})[int(row["severity"])] = row[
                    "top1"
                ]
        if lines:
            per_model.append((r["model"]["name"], lines, rows.get("clean", {}).get("top1")))
    if not per_model or all(len(pts) < 2 for _, lines, _ in per_model for pts in lines.values()):
        return None  # no corruption with several severities
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    cols = min(3, len(per_model))
    nrows = -(-len(per_model) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4 * nrows), squeeze=False, sharey=True)
    n_lines = max(len(lines) for _, lines, _ in per_model)
    cmap = plt.get_cmap("tab10" if n_lines <= 10 else "tab20")
    for ax, (model, lines, clean) in zip(axes.flat, per_model, strict=False):
        for i, (corr, pts) in enumerate(sorted(lines.items())):
            pts = {0: clean, **pts} if clean is not None else pts
            xs = list(range(min(pts), max(pts) + 1))
            ys = [np.nan if x not in pts else 100 * pts[x] for x in xs]  # NaN: a gap, not a line through it
            style = {"color": "black", "ls": "--", "marker": "s"} if corr == "defocus_disk" else {
                "color": cmap(i % 20), "marker": "o"}  # the OpticsBench baseline stands out  # fmt: skip
            ax.plot(xs, ys, ms=3, lw=1.2, alpha=0.9, label=corr, **style)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(model)
        ax.set_xlabel("severity (0 = clean)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(per_model) :]:
        ax.axis("off")
    axes[0, 0].set_ylabel("top-1 accuracy (%)")
    fig.tight_layout()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7, title="corruption")
    return fig


def vcr_curves(results: Sequence[Mapping[str, Any]], subset: str, path: str | os.PathLike) -> Path | None:
    """Accuracy (left) and consistency (right) curves s_a, s_p over Δv on one VCR subset, with the per-bin rates
    (dot size ∝ images). Without human data all models share one row; with human data each model gets a row with the
    human curve and the areas where humans lead (A^{h>m}, which lowers HMRI) or the model leads (A^{m>h}, MRSI)."""
    entries = [(r["model"]["name"], r["metrics"].get("vcr", {}).get("subsets", {}).get(subset)) for r in results]
    entries = [(n, e) for n, e in entries if e]
    if not entries:
        return None
    plt = _plt()
    with_human = any(e.get("human") for _, e in entries)
    rows = [[(j, n, e)] for j, (n, e) in enumerate(entries)] if with_human else [list(
        (j, n, e) for j, (n, e) in enumerate(entries))]  # fmt: skip
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 4.0 * len(rows)), squeeze=False, sharey=True)
    for row_axes, group in zip(axes, rows, strict=True):
        for ax, prop, title in ((row_axes[0], "a", "accuracy $s_a$"), (row_axes[1], "p", "consistency $s_p$")):
            for j, model, e in group:
                _vcr_panel(ax, j, model, e, prop)
            suffix = f" — {group[0][1]}" if with_human else ""
            ax.set_title(f"{subset}: {title}{suffix}", fontsize=10)
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower left")
        row_axes[0].set_ylabel("rate")
    for ax in axes[-1]:
        ax.set_xlabel("visual change Δv")
    fig.tight_layout()
    return _save(fig, path)


def _vcr_panel(ax, j: int, model: str, e: Mapping[str, Any], prop: str) -> None:
    x = np.linspace(0, 1, 101)
    h = e.get("human")
    curve = (h or {}).get(f"model_curve_{prop}") or e.get(f"curve_{prop}")
    if not curve:
        return
    color = _COLORS[j % 10]
    bins = curve["bins"]
    pts = [(bx, by, c) for bx, by, c in zip(bins["x"], bins["y"], bins["count"], strict=True) if by is not None]
    if pts:
        bx, by, bc = np.array(pts).T
        ax.scatter(bx, by, s=8 + 40 * bc / bc.max(), color=color, alpha=0.45, lw=0, label=f"{model} per-bin rate")
    space = " (16-class)" if h else ""
    if curve.get("grid") is None:  # below the minimum support: the bin rates only
        ax.plot([], [], color=color, lw=2, label=f"{model}{space}: no curve (too few usable Δv bins)")
        return
    y = np.array(curve["grid"])
    ax.plot(x, y, color=color, lw=2, label=f"{model}{space} R̂={curve['R']:.3f}")
    shade_band(ax, x, curve, color)
    if h and h[f"human_curve_{prop}"].get("grid") is not None:
        hy = np.array(h[f"human_curve_{prop}"]["grid"])
        ax.plot(x, hy, color="black", lw=2, ls="--", label=f"human R̂={h[f'human_R_{prop}']:.3f}")
        shade_band(ax, x, h[f"human_curve_{prop}"], "0.4", "human ")
        ax.fill_between(
            x,
            y,
            hy,
            where=hy >= y,
            interpolate=True,
            color="#d62728",
            alpha=0.2,
            lw=0,
            label=f"human lead A^(h>m): HMRI={_fmt(h[f'hmri_{prop}'])}",
        )
        ax.fill_between(x, y, hy, where=y >= hy, interpolate=True, color="#2ca02c", alpha=0.3, lw=0,
                        label=f"model lead A^(m>h): MRSI={_fmt(h[f'mrsi_{prop}'])}")  # fmt: skip


def shade_band(ax, x: np.ndarray, curve: Mapping[str, Any], color: str, who: str = "") -> None:
    """The curve's pointwise confidence band (``curve["band"]``, 83 % by default) as a shaded region."""
    band = curve.get("band")
    if band:
        ax.fill_between(x, band["lo"], band["hi"], color=color, alpha=0.18, lw=0,
                        label=f"{who}{100 * band['level']:g} % band")  # fmt: skip


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def delta_v_histograms(results: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path | None:
    """Δv distribution of each VCR subset (40 bins) with the 20-image coverage threshold."""
    if not results:
        return None
    subsets = results[0]["metrics"].get("vcr", {}).get("subsets", {})
    subsets = {k: v for k, v in subsets.items() if v.get("delta_v_hist")}
    if not subsets:
        return None
    plt = _plt()
    cols = min(3, len(subsets))
    nrows = -(-len(subsets) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.2 * nrows), squeeze=False)
    settings = results[0]["metrics"]["vcr"]["settings"]
    for ax, (name, e) in zip(axes.flat, subsets.items(), strict=False):
        counts = np.array(e["delta_v_hist"])
        edges = np.linspace(0, 1, len(counts) + 1)
        ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#1f77b4", edgecolor="white", lw=0.3)
        ax.axhline(settings["coverage_min"], color="#d62728", ls="--", lw=1, label=f"{settings['coverage_min']} images")
        ax.set_title(f"{name}: coverage {100 * e['coverage']:.1f}% (n={e['n']})", fontsize=9)
        ax.set_xlabel("Δv")
        ax.set_xlim(0, 1)
        ax.legend(fontsize=7)
    for ax in axes.flat[len(subsets) :]:
        ax.axis("off")
    axes[0, 0].set_ylabel("images")
    return _save(fig, path)


def overlap_heatmap(overlap: np.ndarray, names: Sequence[str], labels: Sequence[int], path: str | os.PathLike) -> Path:
    """Overlap scores reordered by category, each category framed (Fig. 2 of Laugros et al., BMVC 2021)."""
    plt = _plt()
    labels = np.asarray(labels)
    order = np.argsort(labels, kind="stable")
    o = np.asarray(overlap)[np.ix_(order, order)]
    n = len(names)
    size = max(5.0, 0.22 * n + 2)
    fig, ax = plt.subplots(figsize=(size + 1, size))
    im = ax.imshow(o, cmap="viridis", vmin=0, vmax=1)
    ticks = [names[i] for i in order]
    ax.set_xticks(range(n), ticks, rotation=90, fontsize=7)
    ax.set_yticks(range(n), ticks, fontsize=7)
    sorted_labels = labels[order]
    start = 0
    for cat in dict.fromkeys(sorted_labels.tolist()):
        size_c = int((sorted_labels == cat).sum())
        ax.add_patch(plt.Rectangle((start - 0.5, start - 0.5), size_c, size_c, fill=False, ec="#ff7f0e", lw=2))
        ax.text(start + size_c / 2 - 0.5, start - 0.7, f"C{cat + 1}", ha="center", va="bottom", fontsize=8,
                color="#ff7f0e")  # fmt: skip
        start += size_c
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="overlapping score")
    ax.set_title(f"Overlapping scores, {len(set(labels.tolist()))} categories", pad=18)
    return _save(fig, path)
