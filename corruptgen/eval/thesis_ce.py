"""Table 4.1 of Laugros's thesis (PhD thesis, Université Grenoble Alpes 2022, §4.2.5–4.2.6) in ``corruptgen report``:
per model, the mean CE of ImageNet-C's set₁ and set₂ and the CE of border and obstruction.

§4.2.5: set₁ is the eight ImageNet-C corruptions that overlap most (the three noises, the four blurs and pixelate),
set₂ the seven others; a set's score is the mean of its corruptions' CE (ImageNet-C's CE, ``Σ_s E_s / Σ_s E^ref_s``,
read from the ``imagenet_c`` metrics of an ImageNet-C build: AlexNet's published errors by default). §4.2.6: border
and obstruction's CE is ``E_c / E^ref_c`` on a ``laugros`` build, from its ``laugros`` metrics, against the reference
model given to ``corruptgen eval --reference`` (the thesis's is AlexNet; no errors are published for these two).
CE is shown ×100 (lower is better). The thesis's gains in parentheses compare with its standard ResNet-50; here every
model is a row, and the gains are the differences between rows.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: §4.2.5's sets: set₁ = the noises, the blurs and pixelate; set₂ = ImageNet-C's seven other corruptions.
SET_1 = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
         "pixelate")  # fmt: skip
SET_2 = ("snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "jpeg_compression")
#: §4.2.6's two corruptions that overlap with none of ImageNet-C's (family ``laugros``).
NOT_COVERED = ("border", "obstruction")
COLUMNS = ("mean CE set₁", "mean CE set₂", "Border", "Obstruction")


def _set_mean(per: dict[str, Any], names: Sequence[str]) -> tuple[float, int] | None:
    ces = [per[c]["ce"] for c in names if (per.get(c) or {}).get("ce") is not None]
    return (float(np.mean(ces)), len(ces)) if ces else None


def table_4_1(results: Sequence[dict[str, Any]]) -> dict[str, dict[str, tuple[float, int] | None]] | None:
    """``{model: {column: (CE, corruptions averaged) or None}}`` over the results (a model evaluated on several builds
    takes each column from the first that has it), or ``None`` when no result has any of the four."""
    models: dict[str, dict[str, tuple[float, int] | None]] = {}
    for result in results:
        metrics = result.get("metrics") or {}
        built = str((result.get("data") or {}).get("benchmark") or "")
        values: dict[str, tuple[float, int] | None] = {}
        if built == "imagenet-c":
            per = (metrics.get("imagenet_c") or {}).get("corruptions") or {}
            values = {COLUMNS[0]: _set_mean(per, SET_1), COLUMNS[1]: _set_mean(per, SET_2)}
        elif built == "laugros":
            per = (metrics.get("laugros") or {}).get("corruptions") or {}
            for name, row in (metrics.get("subsets") or {}).items():
                corruption = str(row.get("corruption") or "").rpartition("/")[2]
                ce = (per.get(name) or {}).get("ce")
                if corruption in NOT_COVERED and ce is not None:
                    values[COLUMNS[2 + NOT_COVERED.index(corruption)]] = (float(ce), 1)
        entry = models.setdefault(result["model"]["name"], dict.fromkeys(COLUMNS))
        for column, value in values.items():
            if value is not None and entry[column] is None:
                entry[column] = value
    models = {m: e for m, e in models.items() if any(v is not None for v in e.values())}
    return models or None


def _cell(value: tuple[float, int] | None, column: str) -> str:
    if value is None:
        return "–"
    size = len(SET_1) if column == COLUMNS[0] else len(SET_2) if column == COLUMNS[1] else 1
    return f"{100 * value[0]:.1f}" + ("" if value[1] == size else f" ({value[1]}/{size})")


def render_4_1(results: Sequence[dict[str, Any]], out: Path,
               table: Callable[[list[str], list[list[str]]], list[str]]) -> tuple[list[str], list[Path]]:  # fmt: skip
    """Table 4.1's markdown lines and ``thesis-4.1.csv`` (nothing when no result has its entries)."""
    models = table_4_1(results)
    if models is None:
        return [], []
    rows = [[m, *(_cell(e[c], c) for c in COLUMNS)] for m, e in models.items()]
    lines = ["### Table 4.1: CE of set₁ / set₂ (ImageNet-C) and of border / obstruction (family laugros)", "",
             "CE × 100, lower is better: ImageNet-C's CE against its build's reference (AlexNet by default), averaged "
             "over set₁ (noises, blurs, pixelate) and set₂ (the other seven; (k/n): only k of the set's n evaluated); "
             "border and obstruction against the --reference model of the laugros build's eval (the thesis: "
             "AlexNet).", "", *table(["model", *COLUMNS], rows)]  # fmt: skip
    path = out / "thesis-4.1.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "mean_ce_set1", "set1_corruptions", "mean_ce_set2", "set2_corruptions", "border_ce",
                    "obstruction_ce"])  # fmt: skip
        for m, e in models.items():
            s1, s2, border, obstruction = (e[c] for c in COLUMNS)
            w.writerow(
                [m, *(s1 or (None, 0)), *(s2 or (None, 0)), border and border[0], obstruction and obstruction[0]]
            )
    return lines, [path]
