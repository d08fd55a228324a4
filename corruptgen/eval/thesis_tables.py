"""The layouts of Laugros's thesis (PhD thesis, Université Grenoble Alpes 2022, Tables 3.2, 3.4 and 4.1) in
``corruptgen report``.

One table per :class:`Section` whose subsets are present in the results: models as rows, one APP column per
corruption (APP = acc_c / acc_clean, thesis Eq. 2.2, each against the clean subset of the same build; a corruption with
several severities shows the mean APP over the severities present, as the thesis does for ImageNet-C), and the clean
accuracy. The built-in sections are 3.2 (§3.2's ten, family ``laugros``), 3.4a (ImageNet-C) and 3.4b (the extra
synthetic corruptions, family ``laugros``); another is one more :class:`Section` in :data:`SECTIONS`. Table 4.1 (CE,
not APP) is :mod:`.thesis_ce`'s, rendered after them.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .thesis_adversarial import ORDER as ADVERSARIAL_ORDER
from .thesis_adversarial import adversarial_column
from .thesis_ce import render_4_1

Row = dict[str, Any]

#: Table 3.4a's column labels, in its order (then ImageNet-C's four extra corruptions).
IMAGENET_C_LABELS = {
    "gaussian_noise": "Gauss", "shot_noise": "Shot", "impulse_noise": "Impul", "defocus_blur": "Defocus",
    "glass_blur": "Glass", "motion_blur": "Motion", "zoom_blur": "Zoom", "snow": "Snow", "fog": "Fog",
    "frost": "Frost", "brightness": "Bright", "contrast": "Contr", "elastic_transform": "Elastic",
    "pixelate": "Pixelate", "jpeg_compression": "Jpeg", "speckle_noise": "Speckle", "gaussian_blur": "GBlur",
    "spatter": "Spatter", "saturate": "Saturate",
}  # fmt: skip
#: Table 3.4b's labels first (obstruction, colour, translation, rotation), then the others in Figures 3.2 / 4.3 order.
LAUGROS_LABELS = {
    "obstruction": "Obstru", "color_distortion": "Color", "translation": "Trans", "rotation": "Rot",
    "gaussian_noise": "Gaus", "blur": "Blur", "artifacts": "Art", "brightness": "Bright", "contrast": "Contr",
    "quantization": "Quant", "thumbnail_resize": "Thumb", "border": "Border", "shear": "Shear",
    "backlight": "Backlight", "gray_scale": "Gray", "flip": "Flip",
}  # fmt: skip


#: Table 3.2's columns (§3.2's set: Figure 3.2's nine and the flip), labelled and ordered as the thesis prints them.
TABLE_3_2_LABELS = {
    "gaussian_noise": "gaus", "artifacts": "art", "obstruction": "obstr", "blur": "blur", "contrast": "contr",
    "brightness": "bright", "color_distortion": "color", "translation": "transl", "rotation": "rot", "flip": "flip",
}  # fmt: skip

Match = Callable[[str, Row, str], "str | None"]


def by_corruption(benchmark: str, labels: dict[str, str]) -> Match:
    """A column matcher: the corrupted subsets of ``benchmark``'s builds, one column per corruption, labelled
    ``labels[corruption]`` (else the corruption's name)."""

    def match(subset: str, row: Row, built: str) -> str | None:
        name = str(row.get("corruption") or "").rpartition("/")[2]
        return labels.get(name, name) if built == benchmark and name else None

    return match


def among(benchmark: str, labels: dict[str, str]) -> Match:
    """Like :func:`by_corruption`, for the corruptions ``labels`` names only."""

    def match(subset: str, row: Row, built: str) -> str | None:
        name = str(row.get("corruption") or "").rpartition("/")[2]
        return labels.get(name) if built == benchmark else None

    return match


@dataclass(frozen=True)
class Section:
    """One thesis table.

    Attributes:
        key: the table's number (``3.4a``); also names its CSV (``thesis-3.4a.csv``).
        title: the table's caption.
        match: ``(name, row, benchmark) -> column label or None`` for each entry of a result's ``metrics[source]``
            (every source of ``sources``; ``benchmark``: the evaluated build's family, ``imagenet-c``); entries with
            the same label are averaged (severities).
        order: column labels in the thesis's order (others follow in the order met).
        sources: the keys of ``results["metrics"]`` holding the entries (``subsets``: rows with ``top1`` and
            ``app``; another key holding rows of the same shape, e.g. white-box attack results, works the same).
    """

    key: str
    title: str
    match: Match
    order: tuple[str, ...] = ()
    sources: tuple[str, ...] = ("subsets",)
    mean: bool = True  # a mean column (3.4c has none: its white-box and black-box APPs are not averaged)


SECTIONS: list[Section] = [
    Section("3.4a", "APP per ImageNet-C corruption (mean over the severities present)",
            by_corruption("imagenet-c", IMAGENET_C_LABELS), tuple(IMAGENET_C_LABELS.values())),
    Section("3.4b", "APP per extra synthetic corruption (family laugros)", by_corruption("laugros", LAUGROS_LABELS),
            tuple(LAUGROS_LABELS.values())),
    Section("3.2", "APP per corruption of §3.2 (family laugros, --selection iccvw2019)",
            among("laugros", TABLE_3_2_LABELS), tuple(TABLE_3_2_LABELS.values())),
    Section("3.4c", "APP per adversarial attack (white-box: eval --attacks; black-box: an adversarial build)",
            adversarial_column, ADVERSARIAL_ORDER, mean=False),
]  # fmt: skip


def _app(row: Row, clean: float | None) -> float | None:
    if row.get("app") is not None:
        return float(row["app"])
    top1 = row.get("top1")
    return None if top1 is None or not clean else float(top1) / clean


def section_table(results: Sequence[dict[str, Any]], section: Section) -> dict[str, Any] | None:
    """``{"columns", "models": {model: {"clean", "app": {label: value}}}}`` for one section, or ``None`` when no
    result has its entries. A model evaluated on several builds takes each column from the first that has it."""
    models: dict[str, dict[str, Any]] = {}
    met: dict[str, None] = {}
    for result in results:
        metrics = result.get("metrics") or {}
        clean = (metrics.get("subsets") or {}).get("clean", {}).get("top1")
        built = str((result.get("data") or {}).get("benchmark") or "")
        values: dict[str, list[float]] = {}
        entries = [item for key in section.sources for item in (metrics.get(key) or {}).items()]
        for name, row in entries:
            label = section.match(name, row, built) if isinstance(row, dict) and name != "clean" else None
            if label is not None:
                met[label] = None
                app = _app(row, clean)
                values.setdefault(label, [])
                if app is not None:
                    values[label].append(app)
        if not values:
            continue
        entry = models.setdefault(result["model"]["name"], {"clean": clean, "app": {}})
        for label, apps in values.items():
            if label not in entry["app"]:
                entry["app"][label] = float(np.mean(apps)) if apps else None
    if not models:
        return None
    columns = [c for c in section.order if c in met] + [c for c in met if c not in section.order]
    return {"columns": columns, "models": models}


#: an APP cell of a model whose clean accuracy is 0 (APP = acc_c / acc_clean, Eq. 2.2, has no value)
UNDEFINED = "undefined (clean accuracy 0)"


def _fmt(v: float | None, scale: float = 1.0, digits: int = 2) -> str:
    return "–" if v is None else f"{scale * v + 0.0:.{digits}f}"


def render(results: Sequence[dict[str, Any]], out: Path, table: Callable[[list[str], list[list[str]]], list[str]],
           sections: Sequence[Section] | None = None) -> tuple[list[str], list[Path]]:  # fmt: skip
    """Markdown lines for every section present (nothing when none is; ``table(header, rows)`` writes a table) and
    their CSVs ``thesis-<key>.csv`` in ``out``. The clean accuracy is shown with the first table, and again with a
    later one whose builds' clean accuracy differs for some model (another preprocessing or other images)."""
    tables = [(s, t) for s in (SECTIONS if sections is None else sections) if (t := section_table(results, s))]
    ce_lines, ce_files = render_4_1(results, out, table) if sections is None else ([], [])
    if not tables and not ce_lines:
        return [], []
    lines = ["## Thesis tables (Laugros, PhD thesis 2022)", "",
             "APP = acc_c / acc_clean (Eq. 2.2; higher is better), each against the clean subset of the same "
             "build; Clean = top-1 % on that subset.", ""]  # fmt: skip
    files: list[Path] = []
    first: dict[str, float | None] = {}
    for s, t in tables:
        models = t["models"]
        show_clean = not first or any(
            m in first and first[m] is not None and e["clean"] is not None and abs(first[m] - e["clean"]) > 1e-12
            for m, e in models.items()
        )
        for m, e in models.items():
            first.setdefault(m, e["clean"])
        header = ["model", *(["Clean %"] if show_clean else []), *t["columns"], *(["mean"] if s.mean else [])]
        rows = []
        for m, e in models.items():
            vals = [e["app"].get(c) for c in t["columns"]]
            known = [v for v in vals if v is not None]
            undefined = e["clean"] == 0  # APP = acc / acc_clean has no value
            cells = [UNDEFINED if undefined else _fmt(v) for v in vals]
            mean = [UNDEFINED if undefined else _fmt(float(np.mean(known)) if known else None)] if s.mean else []
            rows.append([m, *([_fmt(e["clean"], 100, 1)] if show_clean else []), *cells, *mean])
        lines += [f"### Table {s.key}: {s.title}", "", *table(header, rows)]
        path = out / f"thesis-{s.key}.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "clean_top1", *t["columns"]])
            w.writerows([[m, e["clean"], *(e["app"].get(c) for c in t["columns"])] for m, e in models.items()])
        files.append(path)
    return lines + ce_lines, files + ce_files
