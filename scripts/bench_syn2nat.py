#!/usr/bin/env python
"""Throughput of the full Syn2Nat engine vs a bare albumentations loop, measured in the same run.

Engine: read JPEG files -> decode -> Resize(256,256,AREA)+CenterCrop(224) -> corrupt -> JPEG q85 -> tar shards +
manifest. Baselines on the same images: (1) "bare": the same corruption functions in a bare loop over images already
decoded and preprocessed (compute only, the issue's baseline); (2) "bare+io": the same loop plus what any script that
writes the benchmark must do (decode and preprocess each input once, JPEG-encode each output), without sharding,
metadata or manifest. Ratios are engine time / baseline time (lower is better). The baselines live in
``corruptgen.bench.baselines`` (shared with ``corruptgen bench``); every row is timed by
``corruptgen.bench.timing.time_work`` (warm-up, median of ``--repeats`` runs of >= 0.5 s, CPU-seconds per image of
this process: the ``--workers 2`` row's workers are child processes, their CPU time is not counted).

    python scripts/bench_syn2nat.py [--images 60] [--subsets syn2nat|all|a,b] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np
import skimage.data
from PIL import Image

from corruptgen.bench.baselines import syn2nat_bare, syn2nat_bare_io
from corruptgen.bench.timing import describe_threads, fix_threads, time_work
from corruptgen.engine.options import RunOptions
from corruptgen.engine.run import render
from corruptgen.family.benchmark import get_benchmark
from corruptgen.family.plan import Plan, SourceSpec
from corruptgen.family.preprocess import get_preprocess

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


def bench_engine(plan: Plan, out: Path, workers: int = 1) -> None:
    shutil.rmtree(out, ignore_errors=True)
    render(plan, out, RunOptions(workers=workers, progress=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=60)
    ap.add_argument("--subsets", default=None, help="default: the 18 Syn2Nat corruptions; 'all' for the 40")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of >= 0.5 s; the median is printed")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenCV threads (default 1)")
    args = ap.parse_args()
    threads = fix_threads(args.threads)

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

        def counted(fn):
            return lambda: (fn(), n)[1]

        r = {
            "bare": time_work(counted(lambda: syn2nat_bare(plan, images, keys)), runs=args.repeats),
            "bare+io": time_work(counted(lambda: syn2nat_bare_io(plan, paths)), runs=args.repeats),
            "engine": time_work(counted(lambda: bench_engine(plan, tmp / "out")), runs=args.repeats),
            "engine2": time_work(counted(lambda: bench_engine(plan, tmp / "out", workers=2)), runs=args.repeats),
        }
        ips = {k: v["images_per_s"] for k, v in r.items()}
        print(f"images: {len(images)} x {len(plan.subsets)} subsets = {n} corrupted images, median of {args.repeats}"
              " runs >= 0.5 s after a warm-up")  # fmt: skip
        print(describe_threads(threads))
        rows = [
            ("bare loop, pre-decoded, compute only", "bare"),
            ("bare loop + decode + JPEG encode", "bare+io"),
            ("engine, 1 process (everything, to shards)", "engine"),
            ("engine, --workers 2", "engine2"),
        ]
        for label, key in rows:
            print(f"{label:43s} {ips[key]:8.1f} img/s {r[key]['cpu_s_per_image']:8.5f} CPU-s/img (this process)")
        print(f"ratio engine / bare          {ips['bare'] / ips['engine']:.3f}  (goal <= 1.15)")
        print(f"ratio engine / bare+io       {ips['bare+io'] / ips['engine']:.3f}  (the engine's own overhead)")
        print(f"ratio engine(2 workers)/bare {ips['bare'] / ips['engine2']:.3f}")


if __name__ == "__main__":
    main()
