"""Card figures: a sample grid (one tile per corruption, composed with PIL) and, for VCR, per-subset Δv histograms
(matplotlib).

Text is set in DejaVu Sans (shipped with matplotlib, it has Δ and the other glyphs used); plots are drawn on a
private :class:`~matplotlib.figure.Figure` (no pyplot state, any backend) and every PNG is saved without a timestamp
or version in the metadata, so the same build gives the same bytes.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence

from ..engine.reader import Build
from .features import field_kind

DELTA_V_BINS = 40  # VCR Algorithm 1 / §4.1: M = 40 equal bins; coverage = share of bins holding >= 20 images
DELTA_V_MIN_PER_BIN = 20
FONT = {"font.family": "DejaVu Sans", "font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9}
_DPI = 100


def _decode_tile(fields: dict[str, bytes | None], tile: int):
    """A tile of the sample's image, or ``None`` when it has none or it does not decode. The build's reader checked
    the declared pixels against the build's limit before: PIL's own bomb warning is not shown."""
    from PIL import Image

    images = sorted(f for f, data in fields.items() if data is not None and field_kind(f) in ("image", "array"))
    if not images:
        return None
    chosen = images[len(images) // 2]  # a sequence (000.jpg ...) shows its middle frame
    if field_kind(chosen) == "array":  # a float image (npy), rounded to 8 bits for the figure only
        from ..io.decode import BadImageError
        from ..io.float_images import decode_npy, to_uint8

        try:
            img = Image.fromarray(to_uint8(decode_npy(fields[chosen])))
        except BadImageError:
            return None
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                img = Image.open(io.BytesIO(fields[chosen])).convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError):  # truncated or corrupt image data
            return None
    img.thumbnail((tile, tile))
    return img


def _grid_subsets(build: Build, limit: int = 40) -> list[str]:
    """Clean plus one subset per corruption (its middle severity), at most ``limit`` tiles."""
    by_corruption: dict[str, list[str]] = {}
    for name in build.configs():
        by_corruption.setdefault(build.subset(name).get("corruption") or name, []).append(name)
    chosen = []
    for names in by_corruption.values():
        names = sorted(names, key=lambda n: (build.subset(n).get("severity") is None, build.subset(n).get("severity")))
        chosen.append(names[(len(names) - 1) // 2])
    return chosen[:limit]


def _png(fig) -> bytes:
    """The figure as PNG bytes, without a timestamp or version in the metadata."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


def sample_grid(build: Build, *, tile: int = 160, columns: int = 6) -> bytes | None:
    """A PNG grid: the same source image in every (chosen) subset, each tile titled with its subset name.

    Composed with PIL (a grid of 40 tiles drew in 5 s with matplotlib's layout engine, here in ~0.1 s); titles in
    DejaVu Sans from matplotlib's fonts."""
    names = _grid_subsets(build)
    if not names:
        return None
    first = build.shard_samples(names[0], build.shards(names[0])[0], lambda x: x == "json")
    target = next((build.metadata(f).get("source_key") for _, f in first), None)
    tiles = []
    for name in names:
        picked = None
        for _key, fields in build.shard_samples(name, build.shards(name)[0], lambda f: True):
            meta = build.metadata(fields)
            if picked is None or meta.get("source_key") == target:
                picked = fields
            if meta.get("source_key") == target:
                break
        img = _decode_tile(picked or {}, tile)
        if img is not None:
            tiles.append((name, img))
    if not tiles:
        return None
    return _compose(tiles, tile, min(columns, len(tiles)))


def _compose(tiles: list, tile: int, cols: int) -> bytes:
    """Tiles (name, PIL image ≤ tile²) on a white canvas, ``cols`` per row, each under its centred title."""
    from PIL import Image, ImageDraw

    pad, title = 10, 22
    rows = -(-len(tiles) // cols)
    canvas = Image.new("RGB", (cols * (tile + 2 * pad), rows * (tile + title + pad)), "white")
    draw = ImageDraw.Draw(canvas)
    font = _font(12)
    for i, (name, img) in enumerate(tiles):
        x0, y0 = (i % cols) * (tile + 2 * pad), (i // cols) * (tile + title + pad)
        label = name if len(name) <= 24 else name[:23] + "…"
        draw.text((x0 + pad + tile / 2, y0 + title / 2 + 2), label, fill="black", font=font, anchor="mm")
        canvas.paste(img, (x0 + pad + (tile - img.width) // 2, y0 + title + (tile - img.height) // 2))
    out = io.BytesIO()
    canvas.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _font(size: int):
    """DejaVu Sans (matplotlib ships it; it has Δ and the other glyphs used; found without importing matplotlib),
    else PIL's own scalable font."""
    from importlib.util import find_spec

    from PIL import ImageFont

    spec = find_spec("matplotlib")
    for folder in (spec and spec.submodule_search_locations) or ():
        try:
            return ImageFont.truetype(f"{folder}/mpl-data/fonts/ttf/DejaVuSans.ttf", size)
        except OSError:
            continue
    return ImageFont.load_default(size)


def delta_v_coverage(values: Sequence[float]) -> float:
    """Share of the 40 equal Δv bins on [0, 1] holding at least 20 images (VCR §4.1)."""
    counts = [0] * DELTA_V_BINS
    for v in values:
        if 0.0 <= v <= 1.0:
            counts[min(int(v * DELTA_V_BINS), DELTA_V_BINS - 1)] += 1
    return sum(c >= DELTA_V_MIN_PER_BIN for c in counts) / DELTA_V_BINS


def delta_v_histogram(delta_v: dict[str, list[float]], *, columns: int = 4) -> bytes:
    """A PNG with one Δv histogram (40 bins on [0, 1], the count axis, the 20-images-per-bin line) per subset."""
    import matplotlib
    import numpy as np
    from matplotlib.figure import Figure

    names = list(delta_v)
    cols = min(columns, len(names))
    rows = -(-len(names) // cols)
    with matplotlib.rc_context(FONT):
        width, height = 3.2 * cols, 2.4 * rows
        fig = Figure(figsize=(width, height))  # fixed margins: the layout engine took ~0.5 s per figure
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
        panel_w, panel_h = width / cols, height / rows
        fig.subplots_adjust(left=0.6 / width, right=1 - 0.15 / width, bottom=0.5 / height, top=1 - 0.3 / height,
                            wspace=0.75 / (panel_w - 0.75), hspace=0.8 / (panel_h - 0.8))  # fmt: skip
        for ax in axes.flat[len(names) :]:
            ax.set_axis_off()
        for ax, name in zip(axes.flat, names, strict=False):
            values = np.clip(np.asarray(delta_v[name], dtype=float), 0.0, 1.0)
            ax.hist(values, bins=DELTA_V_BINS, range=(0.0, 1.0), color="#4a6eb4")
            ax.axhline(DELTA_V_MIN_PER_BIN, color="#c0392b", linestyle="--", linewidth=0.8,
                       label=f"{DELTA_V_MIN_PER_BIN} images per bin")  # fmt: skip
            ax.set_xlim(0.0, 1.0)
            ax.set_title(f"{name} (n = {len(values):,})")
            ax.set_xlabel("Δv = max(0, 1 − VIF)")
            ax.tick_params(labelbottom=True)  # every panel keeps its Δv ticks (shared axis or not)
            ax.set_ylabel("images per bin")
        axes.flat[0].legend(loc="upper right", frameon=False)
        return _png(fig)
