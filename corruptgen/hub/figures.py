"""Card figures: a sample grid (one tile per corruption) and, for VCR, per-subset Δv histograms (PNG, via PIL)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from ..io.tarread import iter_samples
from ..reader import Build
from .features import field_kind

DELTA_V_BINS = 40  # VCR Algorithm 1 / §4.1: M = 40 equal bins; coverage = share of bins holding >= 20 images
DELTA_V_MIN_PER_BIN = 20


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizing
        return ImageFont.load_default()


def _decode_tile(fields: dict[str, bytes | None], tile: int):
    from PIL import Image

    images = sorted(f for f, data in fields.items() if data is not None and field_kind(f) == "image")
    if not images:
        return None
    chosen = images[len(images) // 2]  # a sequence (000.jpg ...) shows its middle frame
    img = Image.open(io.BytesIO(fields[chosen])).convert("RGB")
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


def sample_grid(build: Build, *, tile: int = 128, columns: int = 8) -> bytes | None:
    """A PNG grid: the same source image in every (chosen) subset, labelled with the subset name."""
    from PIL import Image, ImageDraw

    names = _grid_subsets(build)
    if not names:
        return None
    first = build.root / build.shards(names[0])[0]
    target = next(
        (json.loads(f["json"]).get("source_key") for _, f in iter_samples(first, lambda x: x == "json")), None
    )
    tiles = []
    for name in names:
        picked = None
        for _key, fields in iter_samples(build.root / build.shards(name)[0], lambda f: True):
            meta = json.loads(fields["json"]) if fields.get("json") else {}
            if picked is None or meta.get("source_key") == target:
                picked = fields
            if meta.get("source_key") == target:
                break
        img = _decode_tile(picked or {}, tile)
        if img is not None:
            tiles.append((name, img))
    if not tiles:
        return None
    label_h = 16
    cols = min(columns, len(tiles))
    rows = -(-len(tiles) // cols)
    canvas = Image.new("RGB", (cols * (tile + 4) + 4, rows * (tile + label_h + 4) + 4), "white")
    draw = ImageDraw.Draw(canvas)
    font = _font(11)
    for i, (name, img) in enumerate(tiles):
        x = 4 + (i % cols) * (tile + 4)
        y = 4 + (i // cols) * (tile + label_h + 4)
        canvas.paste(img, (x + (tile - img.width) // 2, y + (tile - img.height) // 2))
        text = name if len(name) <= 22 else name[:21] + "…"
        draw.text((x + 2, y + tile + 2), text, fill="black", font=font)
    buf = io.BytesIO()
    canvas.quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(buf, format="PNG")  # palette: ~4x smaller
    return buf.getvalue()


def delta_v_coverage(values: Sequence[float]) -> float:
    """Share of the 40 equal Δv bins on [0, 1] holding at least 20 images (VCR §4.1)."""
    counts = [0] * DELTA_V_BINS
    for v in values:
        if 0.0 <= v <= 1.0:
            counts[min(int(v * DELTA_V_BINS), DELTA_V_BINS - 1)] += 1
    return sum(c >= DELTA_V_MIN_PER_BIN for c in counts) / DELTA_V_BINS


def delta_v_histogram(delta_v: dict[str, list[float]], *, columns: int = 4) -> bytes:
    """A PNG with one Δv histogram (40 bins on [0, 1]) per subset."""
    import numpy as np
    from PIL import Image, ImageDraw

    pw, ph, pad = 240, 150, 28
    names = list(delta_v)
    cols = min(columns, len(names))
    rows = -(-len(names) // cols)
    canvas = Image.new("RGB", (cols * (pw + pad) + pad, rows * (ph + 2 * pad) + pad), "white")
    draw = ImageDraw.Draw(canvas)
    font = _font(11)
    for i, name in enumerate(names):
        counts, _ = np.histogram(np.clip(delta_v[name], 0.0, 1.0), bins=DELTA_V_BINS, range=(0.0, 1.0))
        x0 = pad + (i % cols) * (pw + pad)
        y0 = pad + (i // cols) * (ph + 2 * pad)
        draw.text((x0, y0 - 18), f"{name} (n={len(delta_v[name])})", fill="black", font=font)
        draw.rectangle((x0, y0, x0 + pw, y0 + ph), outline="black")
        top = max(int(counts.max()), 1)
        bw = pw / DELTA_V_BINS
        for b, c in enumerate(counts):
            if c:
                h = c / top * (ph - 4)
                draw.rectangle((x0 + b * bw + 1, y0 + ph - h, x0 + (b + 1) * bw - 1, y0 + ph), fill=(70, 110, 180))
        draw.text((x0, y0 + ph + 3), "0", fill="black", font=font)
        draw.text((x0 + pw - 6, y0 + ph + 3), "1", fill="black", font=font)
        draw.text((x0 + pw // 2 - 8, y0 + ph + 3), "Δv", fill="black", font=font)
        draw.text((x0 + 3, y0 + 2), str(top), fill="gray", font=font)
    buf = io.BytesIO()
    canvas.save(buf, format="PNG", optimize=True)
    return buf.getvalue()
