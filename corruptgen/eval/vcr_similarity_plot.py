"""Fig. 8 / Fig. 12 of Shen et al. (WACV 2025): the curves of one observer with their 83 % bands, one panel per class
of visually similar functions, one for the functions similar to none, and the pairwise matrix of the test."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .metrics.vcr import PLOT_GRID
from .plots import _COLORS, _plt, _save, shade_band

TITLES = {"a": "accuracy $s_a$", "p": "consistency $s_p$"}


def similarity_figure(obs: Mapping[str, Any], prop: str, observer: str, path: str | os.PathLike) -> Path:
    """Panels: each class of ≥ 2 similar functions, then the functions similar to none ("dissimilar"), each curve
    with its shaded band; last, the share of the compared Δv range where each pair does not differ significantly."""
    plt = _plt()
    curves = obs["_curves"]
    groups = [(f"class {i + 1} (similar)", c) for i, c in enumerate(c for c in obs["classes"] if len(c) > 1)]
    alone = [c[0] for c in obs["classes"] if len(c) == 1]
    if alone:
        groups.append(("dissimilar to every other function", alone))
    panels = len(groups) + 1
    cols = min(3, panels)
    rows = -(-panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 3.8 * rows), squeeze=False)
    names = [n for c in obs["classes"] for n in c]
    colour = {n: _COLORS[i % 10] for i, n in enumerate(names)}
    for ax, (title, members) in zip(axes.flat, groups, strict=False):
        for n in members:
            curve = curves[n][prop]
            ax.plot(PLOT_GRID, curve["grid"], color=colour[n], lw=1.8, label=f"{n} R̂={curve['R']:.3f}")
            shade_band(ax, PLOT_GRID, curve, colour[n], f"{n} ")
        ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="visual change Δv", ylabel="rate")
        ax.set_title(f"{observer} {TITLES[prop]}: {title}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="lower left")
    _overlap_matrix(axes.flat[len(groups)], obs, prop, names)
    for ax in axes.flat[panels:]:
        ax.axis("off")
    fig.tight_layout()
    return _save(fig, path)


def _overlap_matrix(ax, obs: Mapping[str, Any], prop: str, names: list[str]) -> None:
    if not names:  # every function skipped (no curve)
        ax.text(0.5, 0.5, "no curves to compare", ha="center", va="center")
        ax.axis("off")
        return
    share = np.eye(len(names))
    for e in obs["pairs"]:
        i, j = (names.index(f) for f in e["functions"])
        share[i, j] = share[j, i] = e["by_property"][prop]["overlap_share"] or 0.0
    im = ax.imshow(share, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=6)
    ax.set_yticks(range(len(names)), names, fontsize=6)
    for e in obs["pairs"]:
        if e["similar"]:
            i, j = (names.index(f) for f in e["functions"])
            for r, c in ((i, j), (j, i)):
                ax.text(c, r, "=", ha="center", va="center", fontsize=7, color="white")
    ax.set_title("share of the compared Δv without a significant difference (= similar)", fontsize=8)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
