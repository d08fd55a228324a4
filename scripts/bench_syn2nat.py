#!/usr/bin/env python
"""Throughput of the full Syn2Nat engine vs a bare albumentations loop, measured in the same run.

Engine: read JPEG files -> decode -> Resize(256,256,AREA)+CenterCrop(224) -> corrupt -> JPEG q85 -> tar shards +
manifest. Baselines on the same images: (1) "bare": the same corruption functions in a bare loop over images already
decoded and preprocessed (compute only, the issue's baseline); (2) "bare+io": the same loop plus what any script that
writes the benchmark must do (decode and preprocess each input once, JPEG-encode each output), without sharding,
metadata or manifest. Ratios are engine time / baseline time (lower is better). The baselines live in
``corruptgen.bench.baselines`` (shared with ``corruptgen bench``).

    python scripts/bench_syn2nat.py [--images 60] [--subsets syn2nat|all|a,b] [--repeats 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import skimage.data
from PIL import Image

from corruptgen.bench.baselines import syn2nat_bare, syn2nat_bare_io
from corruptgen.engine import render
from corruptgen.family import get_benchmark
from corruptgen.plan import Plan, SourceSpec
from corruptgen.preprocess import get_preprocess

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry")


def make_folder(root: Path, n: int) -> list[Path]:
    """n JPEG files (q95) cycling through skimage photos, flipped variants so they differ."""
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()
        if (i // len(PHOTOS)) % 2:
            arr = arr[:, ::-1]
        p = root / f"img_{i:05d}.jpg"
        Image.fromarray(np.ascontiguousarray(arr)).save(p, quality=95)
        paths.append(p)
    return paths


def bench_engine(plan: Plan, out: Path, workers: int = 1) -> float:
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    render(plan, out, workers=workers, progress=False)
    return time.perf_counter() - t0


def bench_bare(plan: Plan, images: list[np.ndarray], keys: list[str]) -> float:
    return syn2nat_bare(plan, images, keys)


def bench_bare_io(plan: Plan, paths: list[Path]) -> float:
    return syn2nat_bare_io(plan, paths)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--subsets", default=None, help="default: the 18 Syn2Nat corruptions; 'all' for the 40")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = make_folder(tmp / "src", args.images)
        bench = get_benchmark("syn2nat")
        plan = bench.plan(source=SourceSpec(f"imagefolder:{tmp / 'src'}"), subsets=args.subsets, clean=False,
                          shard_size=max(1, args.images // 4))  # fmt: skip
        pre = get_preprocess("syn2nat")
        images = [pre(np.asarray(Image.open(p).convert("RGB"))) for p in paths]
        keys = [p.stem for p in paths]
        n = len(images) * len(plan.subsets)
        bench_bare(plan, images[:2], keys[:2])  # warm-up (builds transforms, imports)
        times: dict[str, list[float]] = {"bare": [], "bare+io": [], "engine": [], "engine2": []}
        for _ in range(args.repeats):
            times["bare"].append(bench_bare(plan, images, keys))
            times["bare+io"].append(bench_bare_io(plan, paths))
            times["engine"].append(bench_engine(plan, tmp / "out"))
            times["engine2"].append(bench_engine(plan, tmp / "out", workers=2))
        t = {k: statistics.median(v) for k, v in times.items()}
        print(f"images: {len(images)} x {len(plan.subsets)} subsets = {n} corrupted images, median of {args.repeats}")
        print(f"bare loop, pre-decoded, compute only        {n / t['bare']:8.1f} img/s")
        print(f"bare loop + decode + JPEG encode            {n / t['bare+io']:8.1f} img/s")
        print(f"engine, 1 process (everything, to shards)   {n / t['engine']:8.1f} img/s")
        print(f"engine, --workers 2                         {n / t['engine2']:8.1f} img/s")
        print(f"ratio engine / bare          {t['engine'] / t['bare']:.3f}  (goal <= 1.15)")
        print(f"ratio engine / bare+io       {t['engine'] / t['bare+io']:.3f}  (the engine's own overhead)")
        print(f"ratio engine(2 workers)/bare {t['engine2'] / t['bare']:.3f}")


if __name__ == "__main__":
    main()
