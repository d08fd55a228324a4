"""What ``corruptgen.gallery(build, out=...)`` does: a static site of a build's samples, its facts and, for evaluated
builds, a model's accuracy and per-sample marks (``corruptgen gallery BUILD``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..engine.reader import Build
from ..errors import CorruptgenError
from ..eval.results import json_safe
from ..io.atomic import write_atomic
from ..io.storage import is_url, local_path
from ..quality.coverage import bin_counts
from ..wording import counted
from .assets import Asset, AssetStore
from .evaluated import Evaluation, load_evaluations
from .facts import build_facts, category_names, title_of
from .layout import CLEAN, DV_COLUMNS, Column, Row, dv_column, dv_index, plan_rows, subset_info, table_columns
from .page import Cell, GridRow, Thumb, render_page
from .picking import CleanTwins, Seen, ShardScan, pick_binned, pick_subset, preferred_keys, read_picks, sample_json

MARKER = "gallery.json"
STATIC = ("gallery.css", "gallery.js")


@dataclass
class GalleryResult:
    """What :func:`gallery` wrote: the site's folder and page, its grid's size, the image files it added."""

    out: Path
    rows: int
    columns: int
    shown: int
    written: int
    reused: int
    verify: str
    notes: list[str] = field(default_factory=list)
    refused: str | None = None  # what reading left out (Build.refused_note), also among the notes

    @property
    def index(self) -> Path:
        return self.out / "index.html"

    def summary(self) -> str:
        return (
            f"gallery: {counted(self.rows, 'row')} x {counted(self.columns, 'column')}, "
            f"{counted(self.shown, 'sample')} shown ({self.written} new image files, {self.reused} kept) at "
            f"{self.index}; {self.verify}"
        )


def default_out(build: Build) -> Path:
    """``<build>-gallery`` next to a local build; ``./<name>-gallery`` for a remote one (never inside the build)."""
    if build.base is None:
        return build.root.with_name(build.root.name + "-gallery")
    name = build.base.rstrip("/").rsplit("/", 1)[-1].split("@", 1)[0] or "build"
    return Path.cwd() / f"{name}-gallery"


def _out_dir(build: Build, out: str | os.PathLike | None) -> Path:
    if out is not None and is_url(str(out)) and local_path(out) is None:
        raise CorruptgenError(f"--out must be a local folder (the gallery is a static site), got {out}")
    folder = (local_path(out) if out is not None else default_out(build)).expanduser().resolve()
    if build.base is None and (folder == build.root or folder.is_relative_to(build.root)):
        raise CorruptgenError(f"--out {folder} is inside the build {build.root}: a gallery never writes into a build")
    if folder.is_file():
        raise CorruptgenError(f"--out {folder} is a file")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise CorruptgenError(f"--out {folder} is not empty and holds no gallery ({MARKER}): choose another folder")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / MARKER).is_file():  # claimed first, so an interrupted first run can be re-run into it
        write_atomic(folder / MARKER, b'{"samples": []}\n')
    return folder


def write_gallery(
    build: str | os.PathLike,
    out: str | os.PathLike | None,
    per_subset: int,
    results: Sequence[str | os.PathLike],
    verify: bool,
    progress: bool,
) -> GalleryResult:
    """:func:`corruptgen.gallery.gallery`'s work (its arguments, checked here)."""
    if per_subset < 1:
        raise CorruptgenError(f"--per-subset must be at least 1, got {per_subset}")
    b = Build.open(build)
    evaluations = load_evaluations(results, b)
    folder = _out_dir(b, out)
    scan = ShardScan(b)
    names = [n for n in b.subset_names() if b.shards(n)]
    records, planned = b.manifest.get("subsets") or {}, {s["name"]: s for s in b.plan.get("subsets", [])}
    infos = [subset_info(n, records.get(n) or {}, planned.get(n) or {}, scan.first_meta(n)) for n in names]
    rows = plan_rows(infos, category_names(b.benchmark))
    clean = CLEAN if CLEAN in names else None
    columns = table_columns(rows, clean is not None)
    twins = CleanTwins(scan, clean)
    grid, placed = _place(scan, rows, columns, twins, per_subset, progress)
    store = AssetStore(folder)
    notes = scan.notes
    thumbs = _thumbs(b, placed, twins, store, columns, evaluations, notes)
    for t in thumbs:
        grid[t.row].cells[columns[t.col].id].thumbs.append(t)
    _accuracies(grid, evaluations)
    facts, fact_notes, verify_text = build_facts(b, verify, per_subset, len(thumbs), evaluations)
    refused = b.refused_note()
    notes = fact_notes + notes + ([refused] if refused else [])
    skipped = b.manifest.get("skipped") or []
    html = render_page(f"corruptgen gallery: {title_of(b)}", facts, notes, skipped, columns, grid, thumbs,
                       [e.model for e in evaluations])  # fmt: skip
    for name in STATIC:
        write_atomic(folder / name, resources.files(__package__).joinpath("static", name).read_bytes())
    write_atomic(folder / "index.html", html.encode("utf-8"))
    record = {
        "facts": {fid: value for fid, _, value, _ in facts},
        "notes": notes,
        "skipped": skipped,
        "columns": [{"id": c.id, "label": c.label} for c in columns],
        "rows": [{"name": g.name, "subsets": g.subsets, "histogram": g.histogram} for g in grid],
        "samples": [_record(t, columns) for t in thumbs],
    }
    write_atomic(folder / MARKER, (json.dumps(record, indent=1) + "\n").encode("utf-8"))
    return GalleryResult(folder, len(grid), len(columns), len(thumbs), store.written, store.reused, verify_text, notes,
                         refused)  # fmt: skip


Placed = tuple[int, str, int, Seen]  # (row, column id, slot, sample)


def _place(scan: ShardScan, rows: list[Row], columns: list[Column], twins: CleanTwins, per_subset: int,
           progress: bool) -> tuple[list[GridRow], list[Placed]]:  # fmt: skip
    """The grid's rows and cells, and which sample goes where (the clean column: the row's photos, clean)."""
    clean = twins.clean
    first = next((n for n in scan.build.subset_names() if scan.build.shards(n)), None)
    preferred, near = preferred_keys(scan, clean or first, per_subset)
    grid: list[GridRow] = []
    placed: list[Placed] = []
    for r, row in enumerate(rows):
        if progress:
            print(f"gallery: {row.name}", file=sys.stderr)
        cells: dict[str, Cell] = {}
        hist = None
        if row.binned:
            seen = [s for sub in row.subsets for s in scan.every(sub)]
            picked = pick_binned(seen, preferred, per_subset, dv_index)
            for k in range(DV_COLUMNS):
                cells[dv_column(k).id] = Cell(dv_column(k), list(row.subsets), binned=True)
                placed += [(r, dv_column(k).id, i, s) for i, s in enumerate(picked.get(k, []))]
            hist = bin_counts([s.delta_v for s in seen if s.delta_v is not None]).tolist()
        else:
            for sub in row.subsets:
                column = row.column_of[sub]
                cells[column.id] = Cell(column, [sub])
                chosen = pick_subset(scan, sub, preferred, near, per_subset)
                placed += [(r, column.id, i, s) for i, s in enumerate(chosen)]
        if clean is not None:
            cells[CLEAN] = Cell(columns[0], [CLEAN])
            firsts: dict[str, Seen] = {}
            for s in (s for rr, _, _, s in placed if rr == r):
                firsts.setdefault(s.source_key, s)
            found = [t for t in (twins.get(s) for s in list(firsts.values())[:per_subset]) if t is not None]
            placed += [(r, CLEAN, i, s) for i, s in enumerate(found)]
        grid.append(GridRow(row.name, list(row.subsets), cells, hist))
    return grid, placed


def _thumbs(b: Build, placed: list[Placed], twins: CleanTwins, store: AssetStore, columns: list[Column],
            evaluations: list[Evaluation], notes: list[str]) -> list[Thumb]:  # fmt: skip
    """Each placed sample's files (written once), json, clean twin and mark (the first results file's)."""
    pairs = {id(s): twins.get(s) for _, _, _, s in placed}
    data = read_picks(b, [s for _, _, _, s in placed] + [t for t in pairs.values() if t is not None], notes)
    marks = evaluations[0].marks({(s.subset, s.key) for _, _, _, s in placed}) if evaluations else {}
    col_index = {c.id: i for i, c in enumerate(columns)}
    assets: dict[tuple[str, str | None], Asset | None] = {}

    def asset(s: Seen) -> Asset | None:
        if (s.shard, s.image) not in assets:
            raw = data.get((s.shard, s.image or ""))
            assets[(s.shard, s.image)] = found = None if raw is None else store.add(raw, s.image or "")
            if found is None and raw is not None:
                notes.append(f"{s.subset}/{s.key}: the image does not decode, not shown")
        return assets[(s.shard, s.image)]

    out = []
    for r, col, slot, s in placed:
        a = asset(s)
        if a is None:
            continue
        twin = pairs.get(id(s))
        twin_asset = asset(twin) if twin is not None else None
        mark = marks.get((s.subset, s.key))
        out.append(Thumb(
            id=len(out), subset=s.subset, key=s.key, source_key=s.source_key, row=r, col=col_index[col], slot=slot,
            sha256=a.sha256, image=a.image, thumb=a.thumb, clean=twin_asset.image if twin_asset else None,
            meta=json_safe(_shown(data.get((s.shard, f"{s.key}.json")))), shard=s.shard, member=s.image or "",
            delta_v=s.delta_v, correct=mark.correct if mark else None,
            predicted=(mark.predicted_name or str(mark.predicted)) if mark else None,
        ))  # fmt: skip
    return out


def _shown(raw: bytes | None) -> dict[str, Any]:
    """A sample's json as the page embeds it: whole up to 64 KiB; of a larger one, the entries of up to 1 KiB each
    (the page stays small whatever a sample records)."""
    meta = sample_json(raw)
    if raw is None or len(raw) <= 64 * 2**10:
        return meta
    kept = {k: v for k, v in meta.items() if len(json.dumps(v, default=str)) <= 2**10}
    return {**kept, "omitted": f"{len(meta) - len(kept)} entries over 1 KiB of a {len(raw)}-byte sample json"}


def _accuracies(grid: list[GridRow], evaluations: list[Evaluation]) -> None:
    for row in grid:
        for cell in row.cells.values():
            for ev in evaluations:
                values = [ev.top1[s] for s in cell.subsets if s in ev.top1]
                if cell.binned and values:
                    values = [ev.binned_top1(cell.subsets, cell.column.order[1])]
                if values:
                    cell.accuracy.append((ev.model, values[0] if len(values) == 1 else None))


def _record(t: Thumb, columns) -> dict[str, Any]:
    return {
        "subset": t.subset,
        "key": t.key,
        "source_key": t.source_key,
        "row": t.row,
        "column": columns[t.col].id,
        "slot": t.slot,
        "sha256": t.sha256,
        "shard": t.shard,
        "member": t.member,
        "image": t.image,
        "thumb": t.thumb,
        "clean": t.clean,
        "delta_v": t.delta_v,
        "correct": t.correct,
    }
