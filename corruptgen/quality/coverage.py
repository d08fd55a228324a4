"""Δv coverage of a build (VCR, Shen et al. WACV 2025, §4.1 and Tab. 2): 40 equal bins on [0, 1], a bin is covered
when it holds at least 20 images, coverage = covered bins / 40.

Works on any build directory: samples that carry Δv in their ``params`` (``delta_v``; VCR builds) are read as they
are; samples without it (an ImageNet-C build, say) are scored here, ``Δv = max(0, 1 − VIF)`` between the decoded
corrupted image and the decoded image of the ``clean`` subset with the same ``source_key`` (the steerable-pyramid VIF
of :mod:`.vif`). Clean images are looked up in the clean shard of the same name first (the engine writes chunk n of
every subset to ``<split>-<n>.tar``), so only one chunk of clean images is held in memory at a time. Computing is
bounded: at most ``max_computed`` samples per subset (evenly spaced over its samples) get a VIF; the others are
counted as not measured. On the CPU the VIF runs on one torch thread: small images gain nothing from more, and on a
loaded machine two threads cost 20-30x the CPU time (measured: 0.45 vs 13.5 CPU-s for 20 ImageNet-C samples).
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CorruptgenError
from ..io import tarread
from ..io.layout import image_field

BINS = 40
MIN_COUNT = 20
MAX_COMPUTED = 1000  # samples per subset whose Δv is computed (VIF) by default
#: Sample-json ``params`` keys that hold the measured perceived change Δv (Shen et al., VCR: Δv = max(0, 1 − VIF)).
DELTA_V_KEYS = ("delta_v", "dv", "vd_score")


@dataclass
class SubsetCoverage:
    """Δv coverage of one subset."""

    name: str
    values: np.ndarray
    source: str  # "stored", "computed", "mixed" or "none"
    bins: int = BINS
    min_count: int = MIN_COUNT
    skipped: dict[str, int] = field(default_factory=dict)
    not_measured: int = 0  # samples without stored Δv left out by the ``max_computed`` bound

    @property
    def n(self) -> int:
        return int(self.values.size)

    @property
    def counts(self) -> np.ndarray:
        return bin_counts(self.values, self.bins)

    @property
    def covered(self) -> int:
        return int((self.counts >= self.min_count).sum())

    @property
    def coverage(self) -> float:
        return self.covered / self.bins

    @property
    def max_over_mean(self) -> float:
        """Fullest bin over the mean bin count (1 for a perfectly uniform histogram)."""
        return float(self.counts.max() / (self.n / self.bins)) if self.n else math.nan

    def to_dict(self) -> dict[str, Any]:
        finite = self.values[np.isfinite(self.values)]
        return {
            "subset": self.name, "n": self.n, "delta_v_source": self.source, "bins": self.bins,
            "min_count": self.min_count, "covered_bins": self.covered, "coverage": self.coverage,
            "max_bin_over_mean": None if not self.n else self.max_over_mean,
            "delta_v_min": float(finite.min()) if finite.size else None,
            "delta_v_max": float(finite.max()) if finite.size else None,
            "counts": self.counts.tolist(), "skipped": dict(self.skipped), "not_measured": self.not_measured,
        }  # fmt: skip


def bin_counts(values: Sequence[float] | np.ndarray, bins: int = BINS) -> np.ndarray:
    """Counts of Δv values in ``bins`` equal bins on [0, 1] (bin k = [k/bins, (k+1)/bins), Δv = 1 in the last)."""
    v = np.asarray(values, dtype=np.float64)
    v = np.clip(v[np.isfinite(v)], 0.0, 1.0)
    return np.bincount(np.minimum((v * bins).astype(np.int64), bins - 1), minlength=bins)


def coverage(values: Sequence[float] | np.ndarray, bins: int = BINS, min_count: int = MIN_COUNT) -> float:
    """Share of the ``bins`` equal Δv bins holding at least ``min_count`` values (VCR §4.1: 40 bins, 20 images)."""
    return float((bin_counts(values, bins) >= min_count).mean())


# ------------------------------------------------------------------------------------------------ reading a build
def iter_samples(
    shard: str | Path, *, images: bool, read: Callable[..., Iterator] | None = None
) -> Iterator[tuple[dict[str, Any], bytes | None, bool]]:
    """(metadata, image bytes or None, is_sequence) of every sample of a WebDataset tar (path or URL), in order;
    ``read(shard, want)`` reads it (default: the bounded tar reader, which stops at a sample it refuses)."""

    def want(fld: str) -> bool:
        return fld == "json" or (images and image_field(fld) is not None)

    for key, fields in (read or tarread.iter_samples)(shard, want):
        meta = tarread.parse_json(fields["json"]) if fields.get("json") else {"key": key}
        kinds = {f: image_field(f) for f in fields}  # (frame or None, extension) of the image fields
        image = next((fields[f] for f, k in kinds.items() if k and k[0] is None and fields[f] is not None), None)
        frames = any(k and k[0] is not None for k in kinds.values())
        yield meta, image, frames


def _decode(data: bytes) -> np.ndarray | None:
    """The RGB pixels, or ``None`` when the data do not decode (the reader checked the declared pixels against the
    build's limit: PIL's own bomb warning is not shown)."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                return np.asarray(im.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def _basename(ref: str) -> str:
    return str(ref).rstrip("/").rsplit("/", 1)[-1]


def stored_delta_v(meta: dict[str, Any]) -> float | None:
    params = meta.get("params")
    if isinstance(params, dict):
        for key in DELTA_V_KEYS:
            v = params.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                return float(v)
    return None


class _CleanIndex:
    """Decoded clean images by source key: the same-named clean shard first, every clean shard on a miss."""

    def __init__(self, shards: list[str], read: Callable[..., Iterator] | None = None) -> None:
        self.by_name = {_basename(p): p for p in shards}
        self.read = read
        self.loaded: dict[str, dict[str, bytes]] = {}
        self.all_loaded = False

    def _load(self, path: str) -> dict[str, bytes]:
        name = _basename(path)
        if name not in self.loaded:
            out = {}
            for meta, data, _ in iter_samples(path, images=True, read=self.read):
                if data is not None:
                    out[str(meta.get("source_key", meta.get("key")))] = data
            self.loaded = {name: out} if not self.all_loaded else {**self.loaded, name: out}
        return self.loaded[name]

    def get(self, shard_name: str, source_key: str) -> bytes | None:
        if shard_name in self.by_name:
            hit = self._load(self.by_name[shard_name]).get(source_key)
            if hit is not None:
                return hit
        if not self.all_loaded:
            self.all_loaded = True
            for path in self.by_name.values():
                self._load(path)
        for images in self.loaded.values():
            if source_key in images:
                return images[source_key]
        return None


GROUPINGS = ("subset", "corruption")


def scan(
    directory: str | Path,
    *,
    subsets: Sequence[str] | None = None,
    by: str = "subset",
    bins: int = BINS,
    min_count: int = MIN_COUNT,
    device: str = "cpu",
    progress: Callable[[str], None] | None = None,
    max_computed: int | None = MAX_COMPUTED,
    note: Callable[[str], None] | None = None,
) -> list[SubsetCoverage]:
    """Δv coverage of every corrupted subset of a build (``clean`` is the reference and is not listed).

    ``by="corruption"`` pools the subsets of one corruption (e.g. ImageNet-C's five severities, as VCR's Tab. 2
    compares them) by the samples' ``corruption`` field. ``max_computed``: compute Δv for at most this many samples
    of each subset, evenly spaced (``None``: all); samples with a stored Δv are always read. ``note`` is told, in
    one line, what the build's reader left out (a member over its limit, an unreadable shard).
    """
    import torch

    from ..engine.reader import Build
    from .vif import VIFReference, one_torch_thread

    build = Build.open(directory)
    root = build.location
    if bins < 1 or min_count < 1:
        raise CorruptgenError("--bins and --min-count must be positive")
    if by not in GROUPINGS:
        raise CorruptgenError(f"--by must be one of {', '.join(GROUPINGS)}, got {by!r}")
    found = [(n, build.shards(n)) for n in build.subset_names()]  # read through the build: bounded, refusals counted
    found = [(n, shards) for n, shards in found if shards]
    names = [n for n, _ in found]
    if subsets is not None:
        bad = [s for s in subsets if s not in names]
        if bad:
            raise CorruptgenError(f"no subset {bad[0]!r} in {root}; present: {', '.join(names)}")
    clean = _CleanIndex(dict(found).get("clean", []), lambda rel, want: build.shard_samples("clean", rel, want))
    values: dict[str, list[float]] = {}
    kinds: dict[str, set[str]] = defaultdict(set)
    skipped: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    unmeasured: dict[str, int] = defaultdict(int)

    def group(name: str, meta: dict[str, Any]) -> str:
        key = str(meta.get("corruption") or name) if by == "corruption" else name
        values.setdefault(key, [])
        return key

    for name, shards in found:
        if name == "clean" or (subsets is not None and name not in subsets):
            continue
        if progress:
            progress(name)
        chosen = _evenly_spaced(build.samples(name), max_computed)
        index = -1
        for shard in shards:
            pending: dict[tuple[str, str], list[np.ndarray]] = defaultdict(list)
            refused = len(build.refused)
            for meta, data, frames in iter_samples(shard, images=True, read=lambda rel, want, name=name:
                                                   build.shard_samples(name, rel, want)):  # fmt: skip
                index += 1
                g = group(name, meta)
                dv = stored_delta_v(meta)
                if dv is not None:
                    values[g].append(dv)
                    kinds[g].add("stored")
                elif frames:
                    skipped[g]["sequence (no single image)"] += 1
                elif data is None:
                    skipped[g]["no image"] += 1
                elif chosen is not None and index not in chosen:
                    unmeasured[g] += 1
                elif (image := _decode(data)) is None:
                    skipped[g]["the image does not decode"] += 1
                else:
                    pending[(g, str(meta.get("source_key", meta.get("key"))))].append(image)
            for r in build.refused[refused:]:
                skipped[group(name, {})][f"not read: {r.reason}"] += 1
            for (g, key), images in pending.items():
                ref = clean.get(_basename(shard), key)
                ref_img = None if ref is None else _decode(ref)
                if ref_img is None:
                    skipped[g]["no clean image with this source_key"] += len(images)
                    continue
                if any(im.shape != ref_img.shape for im in images) or min(ref_img.shape[:2]) < 72:
                    skipped[g]["size differs from the clean image or < 72 px"] += len(images)
                    continue
                with one_torch_thread() if device == "cpu" else contextlib.nullcontext():
                    scores = VIFReference(ref_img, device=device, dtype=torch.float64).score(np.stack(images))
                values[g].extend(np.maximum(0.0, 1.0 - scores.cpu().numpy()).tolist())
                kinds[g].add("computed")
    if note is not None and build.refused_note():
        note(build.refused_note())
    if not values:
        raise CorruptgenError(f"{root} has no corrupted subsets to measure")
    results = []
    for g, vals in values.items():
        source = "none" if not kinds[g] else ("mixed" if len(kinds[g]) > 1 else next(iter(kinds[g])))
        results.append(SubsetCoverage(g, np.asarray(vals, dtype=np.float64), source, bins, min_count,
                                      dict(skipped[g]), unmeasured[g]))  # fmt: skip
    return results


def _evenly_spaced(total: int, at_most: int | None) -> set[int] | None:
    """Indices of ``at_most`` samples spread evenly over ``total`` (None: take every sample)."""
    if at_most is None or total <= at_most:
        return None
    return {j * total // at_most for j in range(at_most)}


# ------------------------------------------------------------------------------------------------ reporting
def format_table(rows: Sequence[SubsetCoverage]) -> str:
    """Plain-text table: subset, N, where Δv came from, covered bins, coverage, fullest bin / mean, Δv range."""
    cols = ("N", "Δv", "covered", "coverage", "max/mean", "min Δv", "max Δv")
    head = f"{'subset / corruption':24} " + " ".join(
        f"{c:>{w}}" for c, w in zip(cols, (7, 8, 9, 9, 9, 7, 7), strict=True)
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        d = r.to_dict()
        if r.n:
            lo, hi, ratio = f"{d['delta_v_min']:.3f}", f"{d['delta_v_max']:.3f}", f"{r.max_over_mean:.2f}"
        else:
            lo = hi = ratio = "-"
        cov = f"{r.covered}/{r.bins}"
        lines.append(f"{r.name:24} {r.n:7d} {r.source:>8} {cov:>9} {r.coverage:9.1%} {ratio:>9} {lo:>7} {hi:>7}")
        for why, count in r.skipped.items():
            lines.append(f"{'':24} skipped {count}: {why}")
        if r.not_measured:
            lines.append(f"{'':24} not measured {r.not_measured}: beyond --max-computed (coverage of the measured)")
    if rows:
        b, m = rows[0].bins, rows[0].min_count
        lines.append(f"({b} equal Δv bins on [0, 1]; a bin is covered with ≥ {m} images; max/mean = fullest bin "
                     f"over the mean count, 1 = flat)")  # fmt: skip
    return "\n".join(lines)


def plot(rows: Sequence[SubsetCoverage], path: str | Path, *, columns: int = 4, title: str | None = None) -> Path:
    """One Δv histogram per subset (matplotlib, Agg), with the min-count line; saved as PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    n = max(len(rows), 1)
    cols = min(columns, n)
    nrows = math.ceil(n / cols)
    fig = Figure(figsize=(3.6 * cols, 2.6 * nrows + (0.4 if title else 0)), layout="constrained")
    axes = fig.subplots(nrows, cols, squeeze=False)
    for ax in axes.flat[len(rows) :]:
        ax.set_visible(False)
    for ax, r in zip(axes.flat, rows, strict=False):
        counts = r.counts
        edges = np.linspace(0.0, 1.0, r.bins + 1)
        colours = ["#4c72b0" if c >= r.min_count else "#dd8452" for c in counts]
        ax.bar(edges[:-1], counts, width=1.0 / r.bins, align="edge", color=colours, linewidth=0)
        ax.axhline(r.min_count, color="black", linestyle="--", linewidth=0.8)
        if r.n:
            ax.axhline(r.n / r.bins, color="gray", linestyle=":", linewidth=0.8)
        ax.set_xlim(0, 1)
        ax.set_title(f"{r.name}\nN={r.n}, coverage {r.coverage:.0%}", fontsize=9)
        ax.set_xlabel("Δv", fontsize=8)
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    return out
