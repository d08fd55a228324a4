"""Δv distributions of two builds, function by function (VCR, Shen et al. WACV 2025, App. D and Fig. 11).

The paper overlays the Δv histograms of ImageNet-C's validation images and of its own benchmark for the 9 corruption
functions both share (Gaussian, shot and impulse noise, defocus, glass, motion and Gaussian blur, brightness, frost):
ImageNet-C's five fixed severities peak elsewhere and leave whole Δv ranges empty. Here any two builds are compared:
each is scanned per corruption (:func:`.coverage.scan` with ``by="corruption"``, which pools ImageNet-C's severities
and computes Δv = max(0, 1 − VIF) against the clean twin where a sample stores none), the corruption names are mapped
to one function name (the name without its family; :data:`SAME_FUNCTION` for functions named differently), and the
functions present in both are compared: histograms as percentages of each build's images (Fig. 11's y-axis), and each
one's coverage of the 40 bins (§4.1: a bin is covered with ≥ 20 images).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .coverage import BINS, MAX_COMPUTED, MIN_COUNT, SubsetCoverage, scan

#: Corruption names (either build) that denote the same function as another name; identity otherwise. ImageNet-C
#: and VCR name their 9 shared functions alike, so nothing is needed for them.
SAME_FUNCTION: dict[str, str] = {}


def function_name(corruption: str) -> str:
    """The function a corruption name denotes: ``imagenet_c/gaussian_noise`` and ``gaussian_noise`` alike."""
    base = corruption.rsplit("/", 1)[-1]
    return SAME_FUNCTION.get(base, base)


@dataclass
class FunctionComparison:
    """One function shared by the two builds: its Δv coverage in each."""

    function: str
    a: SubsetCoverage
    b: SubsetCoverage

    def to_dict(self, labels: Sequence[str]) -> dict[str, Any]:
        return {"function": self.function, labels[0]: self.a.to_dict(), labels[1]: self.b.to_dict()}


def compare_builds(
    build_a: str | Path,
    build_b: str | Path,
    *,
    bins: int = BINS,
    min_count: int = MIN_COUNT,
    max_computed: int | None = MAX_COMPUTED,
    device: str = "cpu",
    progress: Callable[[str], None] | None = None,
) -> tuple[list[str], list[FunctionComparison], dict[str, list[str]]]:
    """(labels of the two builds, the shared functions in the first build's order, the functions only one has)."""
    from ..engine.reader import Build

    labels = [Build.open(d).benchmark or Path(d).name for d in (build_a, build_b)]
    if labels[0] == labels[1]:
        labels = [f"{labels[0]} ({Path(d).resolve().name})" for d in (build_a, build_b)]
    if labels[0] == labels[1]:
        labels = [f"{labels[0]} #{i + 1}" for i in range(2)]
    found = []
    for d in (build_a, build_b):
        rows = scan(d, by="corruption", bins=bins, min_count=min_count, device=device, progress=progress,
                    max_computed=max_computed)  # fmt: skip
        merged: dict[str, SubsetCoverage] = {}
        for r in rows:
            name = function_name(r.name)
            if name in merged:  # two corruption names of one function: pool them
                m = merged[name]
                m.values = np.concatenate([m.values, r.values])
                m.not_measured += r.not_measured
                for why, count in r.skipped.items():
                    m.skipped[why] = m.skipped.get(why, 0) + count
            else:
                merged[name] = SubsetCoverage(name, r.values, r.source, bins, min_count, dict(r.skipped),
                                              r.not_measured)  # fmt: skip
        found.append(merged)
    shared = [FunctionComparison(n, found[0][n], found[1][n]) for n in found[0] if n in found[1]]
    only = {labels[i]: [n for n in found[i] if n not in found[1 - i]] for i in range(2)}
    return labels, shared, only


def format_comparison(labels: Sequence[str], rows: Sequence[FunctionComparison]) -> str:
    """Per shared function: N, covered bins and the Δv range holding the middle 90 % of each build's images."""
    head = f"{'function':22} " + " ".join(f"{lab[:30]:>36}" for lab in labels)
    sub = f"{'':22} " + " ".join(f"{'N':>7} {'covered':>9} {'Δv 5–95 %':>18}" for _ in labels)
    lines = [head, sub, "-" * len(sub)]
    for r in rows:
        cells = []
        for c in (r.a, r.b):
            lo, hi = np.percentile(c.values, [5, 95]) if c.n else (math.nan, math.nan)
            span = f"{lo:.2f}–{hi:.2f}" if c.n else "-"
            cells.append(f"{c.n:7d} {f'{c.covered}/{c.bins}':>9} {span:>18}")
        lines.append(f"{r.function:22} " + " ".join(cells))
    if rows:
        lines.append(f"({rows[0].a.bins} equal Δv bins; a bin is covered with ≥ {rows[0].a.min_count} images)")
    return "\n".join(lines)


def plot_comparison(labels: Sequence[str], rows: Sequence[FunctionComparison], path: str | Path,
                    *, columns: int = 3) -> Path:  # fmt: skip
    """Fig. 11: per shared function, both Δv histograms as percentages of each build's images, overlaid."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    n = max(len(rows), 1)
    cols = min(columns, n)
    nrows = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 2.9 * nrows), layout="constrained")
    axes = fig.subplots(nrows, cols, squeeze=False)
    for ax in axes.flat[len(rows) :]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, rows, strict=False):
        edges = np.linspace(0.0, 1.0, r.a.bins + 1)
        for c, label, colour in ((r.a, labels[0], "#dd8452"), (r.b, labels[1], "#4c72b0")):
            share = 100 * c.counts / max(c.n, 1)
            ax.bar(edges[:-1], share, width=1.0 / c.bins, align="edge", color=colour, alpha=0.55, linewidth=0,
                   label=f"{label}: N={c.n}, coverage {c.coverage:.0%}")  # fmt: skip
        ax.set_xlim(0, 1)
        ax.set_title(r.function, fontsize=9)
        ax.set_xlabel("Δv", fontsize=8)
        ax.set_ylabel("% of images", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    return out
