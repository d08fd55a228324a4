"""The gallery's ``index.html``: plain HTML (the grid, the facts, the Δv histograms as inline SVG) that reads
without JavaScript; ``gallery.js`` adds the viewer. Every string that comes from a build (subset names, keys,
labels, reasons, json) is escaped here, and the viewer's data is embedded as JSON in which ``<``, ``>`` and ``&``
are written as ``\\u`` escapes, so no sample can close the block or open a tag.

Machine-checkable: each thumbnail is an ``<a class="thumb">`` with ``data-subset``, ``data-key``,
``data-source-key``, ``data-column``, ``data-severity``, ``data-sha256`` (of the stored image bytes, which
``href`` points at), ``data-shard``, ``data-member`` and, where known, ``data-frame``, ``data-delta-v`` and
``data-correct``; each fact is a ``<tr id="fact-...">`` with a ``data-value``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from ..quality.coverage import MIN_COUNT
from .layout import Column

SKIPPED_ROWS = 1000  # skipped inputs listed in the page (gallery.json lists every one)
CSP = (
    "default-src 'none'; img-src 'self' file:; style-src 'self' file:; script-src 'self' file:; "
    "connect-src 'none'; form-action 'none'; base-uri 'none'"
)


@dataclass
class Thumb:
    """A shown sample: where it sits (row, column, slot), its files, its clean twin's image, its json."""

    id: int
    subset: str
    key: str
    source_key: str
    row: int
    col: int
    slot: int
    sha256: str
    image: str
    thumb: str
    clean: str | None
    meta: dict[str, Any]
    shard: str = ""
    member: str = ""
    delta_v: float | None = None
    correct: bool | None = None
    predicted: str | None = None

    @property
    def frame(self) -> str | None:
        """The frame shown of a sequence (``040`` of ``key.040.jpg``); ``None`` for a single image."""
        parts = self.member[len(self.key) + 1 :].split(".")
        return parts[0] if len(parts) > 1 else None


@dataclass
class Cell:
    column: Column
    subsets: list[str]
    thumbs: list[Thumb] = field(default_factory=list)
    accuracy: list[tuple[str, float | None]] = field(default_factory=list)
    binned: bool = False


@dataclass
class GridRow:
    name: str
    subsets: list[str]
    cells: dict[str, Cell]
    histogram: list[int] | None = None


def attr(value: Any) -> str:
    """An attribute value, quoted and escaped."""
    return '"' + escape("" if value is None else str(value), quote=True) + '"'


def text(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def script_json(obj: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``<``, ``>``, ``&`` or line separators)."""
    raw = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        raw = raw.replace(char, escaped)
    return raw


def render_page(
    title: str,
    facts: Sequence[tuple[str, str, Any, str]],
    notes: Sequence[str],
    skipped: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    rows: Sequence[GridRow],
    thumbs: Sequence[Thumb],
    models: Sequence[str],
) -> str:
    """The whole ``index.html``."""
    data = {
        "columns": [c.label for c in columns],
        "rows": [r.name for r in rows],
        "models": list(models),
        "samples": [_sample_data(t) for t in thumbs],
    }
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content={attr(CSP)}>',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{text(title)}</title>",
        '<link rel="stylesheet" href="gallery.css"><script src="gallery.js" defer></script>',
        "</head><body>",
        f'<header><h1 id="title">{text(title)}</h1></header>',
        _facts(facts, notes, skipped),
        _grid(columns, rows),
        f'<script type="application/json" id="gallery-data">{script_json(data)}</script>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _sample_data(t: Thumb) -> dict[str, Any]:
    return {
        "id": t.id,
        "subset": t.subset,
        "key": t.key,
        "row": t.row,
        "col": t.col,
        "slot": t.slot,
        "image": t.image,
        "clean": t.clean,
        "meta": t.meta,
        "correct": t.correct,
        "predicted": t.predicted,
        "frame": t.frame,
    }


def _facts(facts: Sequence[tuple[str, str, Any, str]], notes: Sequence[str], skipped: Sequence[dict]) -> str:
    rows = "".join(
        f'<tr id={attr("fact-" + fid)} data-value={attr(value)}><th scope="row">{text(label)}</th>'
        f"<td>{text(shown)}</td></tr>"
        for fid, label, value, shown in facts
    )
    out = [f'<section id="facts"><h2>Build</h2><table id="facts-table">{rows}</table>']
    if notes:
        out.append('<ul id="notes">' + "".join(f"<li>{text(n)}</li>" for n in notes) + "</ul>")
    if skipped:
        more = len(skipped) - SKIPPED_ROWS
        body = "".join(
            f"<tr data-key={attr(s.get('key'))} data-subset={attr(s.get('subset'))} "
            f"data-reason={attr(s.get('reason'))}><td>{text(s.get('key'))}</td>"
            f"<td>{text(s.get('subset') or 'every subset')}</td><td>{text(s.get('reason'))}</td></tr>"
            for s in skipped[:SKIPPED_ROWS]
        )
        if more > 0:
            body += f'<tr><td colspan="3">… and {more} more (every one is in gallery.json)</td></tr>'
        out.append(
            f'<details id="skipped-inputs" open><summary>Skipped inputs ({len(skipped)})</summary>'
            f'<table id="skipped"><thead><tr><th>key</th><th>subset</th><th>reason</th></tr></thead>'
            f"<tbody>{body}</tbody></table></details>"
        )
    out.append("</section>")
    return "".join(out)


def _grid(columns: Sequence[Column], rows: Sequence[GridRow]) -> str:
    head = "".join(f'<th scope="col" data-column={attr(c.id)}>{text(c.label)}</th>' for c in columns)
    body = []
    for r, row in enumerate(rows):
        hist = _histogram(row.histogram) if row.histogram is not None else ""
        cells = "".join(_cell(row.cells.get(c.id)) for c in columns)
        subsets = "" if row.subsets == [row.name] else f'<span class="subsets">{text(", ".join(row.subsets))}</span>'
        body.append(
            f'<tr class="row" id={attr(f"row-{r}")} data-row={attr(row.name)} data-index="{r}">'
            f'<th scope="row"><span class="name">{text(row.name)}</span>'
            f"{subsets}{hist}</th>{cells}</tr>"
        )
    return (
        f'<section id="grid"><h2>Samples</h2><table id="grid-table"><thead><tr><th scope="col">corruption</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return '<td class="cell none"></td>'
    acc = "".join(
        f'<div class="acc" data-model={attr(m)} data-top1={attr("" if v is None else repr(v))}>'
        f"{text(m)}: {text('–' if v is None else f'{100 * v:.1f} %')}</div>"
        for m, v in cell.accuracy
    )
    thumbs = "".join(_thumb(t, cell.column) for t in cell.thumbs) or '<span class="empty">no sample</span>'
    return (
        f'<td class="cell" data-column={attr(cell.column.id)} data-subsets={attr(" ".join(cell.subsets))}>'
        f'{acc}<div class="thumbs">{thumbs}</div></td>'
    )


def _thumb(t: Thumb, column: Column) -> str:
    severity = t.meta.get("severity")
    extra = ""
    if t.delta_v is not None:
        extra += f" data-delta-v={attr(repr(t.delta_v))}"
    if t.frame is not None:
        extra += f" data-frame={attr(t.frame)}"
    mark = ""
    if t.correct is not None:
        extra += f" data-correct={attr('true' if t.correct else 'false')}"
        mark = f'<span class="mark">{"✓" if t.correct else "✗"}</span>'
    params = t.meta.get("params") if isinstance(t.meta.get("params"), dict) else {}
    drawn = params.get("severity") if severity is None else None
    facts = (
        t.subset,
        t.key,
        t.meta.get("label_name"),
        t.predicted and f"predicted {t.predicted}",
        t.delta_v is not None and f"Δv {t.delta_v:.3f}",
        isinstance(drawn, (int, float)) and f"severity {drawn:.3g}",
    )
    title = " · ".join(str(x) for x in facts if x)
    return (
        f'<a class="thumb" href={attr(t.image)} data-id="{t.id}" data-row="{t.row}" data-col="{t.col}" '
        f'data-slot="{t.slot}" data-subset={attr(t.subset)} data-key={attr(t.key)} '
        f"data-source-key={attr(t.source_key)} data-column={attr(column.id)} "
        f"data-severity={attr('' if severity is None else severity)} data-sha256={attr(t.sha256)} "
        f"data-shard={attr(t.shard)} data-member={attr(t.member)}{extra} "
        f"title={attr(title)}><img src={attr(t.thumb)} alt={attr(f'{t.subset} {t.key}')}>{mark}</a>"
    )


def _histogram(counts: list[int], width: int = 160, height: int = 36) -> str:
    """The Δv histogram of a row: one bar per bin, blue where the bin holds ≥ 20 samples (covered, VCR §4.1)."""
    bins = len(counts)
    top = max(max(counts), 1)
    bar = width / bins
    bars = "".join(
        f'<rect x="{i * bar:.2f}" y="{height - height * c / top:.2f}" width="{bar * 0.9:.2f}" '
        f'height="{height * c / top:.2f}" class="{"covered" if c >= MIN_COUNT else "thin"}"><title>'
        f"Δv {i / bins:.3f}–{(i + 1) / bins:.3f}: {c}</title></rect>"
        for i, c in enumerate(counts)
    )
    covered = sum(c >= MIN_COUNT for c in counts)
    return (
        f'<figure class="hist" data-counts={attr(json.dumps(counts))} data-covered="{covered}">'
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="Δv histogram">{bars}</svg><figcaption>Δv coverage {covered}/{bins} bins '
        f"(≥ {MIN_COUNT} samples)</figcaption></figure>"
    )
