#!/usr/bin/env python
"""CPU time per sample of each ``laugros`` corruption at 224×224, with baselines measured in the same run.

Each row applies one registered corruption (seeded per call, as the engine does) to photos already resized to
224×224 (``resize224``) and is timed by ``corruptgen.bench.timing.time_work`` (warm-up, median of ``--repeats`` runs
of >= 0.5 s, CPU-seconds per image of this process). Baselines: ``copy`` (an array copy: the floor of any
corruption), the ImageNet-C corruptions of the same name at severity 3 (``imagenet_c/gaussian_noise``, ``brightness``,
``contrast``) and the encoders a build runs on every sample (PNG, JPEG q85, Pillow).

    python scripts/bench_laugros.py [--images 6] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable

import numpy as np
import skimage.data
from PIL import Image

from corruptgen.bench.timing import describe_threads, fix_threads, time_work
from corruptgen.corruptions import get, list_corruptions
from corruptgen.corruptions.registry import Corruption
from corruptgen.family.preprocess import get_preprocess

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry")


def _encode(fmt: str, **kw) -> Callable[[np.ndarray, int], np.ndarray]:
    def fn(image: np.ndarray, seed: int) -> np.ndarray:
        Image.fromarray(image).save(io.BytesIO(), format=fmt, **kw)
        return image

    return fn


def _apply(corruption: Corruption, **options) -> Callable[[np.ndarray, int], np.ndarray]:
    return lambda image, seed: corruption.apply(image, seed, **options)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of >= 0.5 s; the median is printed")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenCV threads (default 1)")
    args = ap.parse_args()
    threads = fix_threads(args.threads)
    pre = get_preprocess("resize224")
    images = [pre(getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()) for i in range(args.images)]

    rows = {c.qualified_name: _apply(c) for c in list_corruptions("laugros")}
    rows["baseline: copy"] = lambda image, seed: image.copy()
    for name in ("gaussian_noise", "brightness", "contrast"):
        rows[f"baseline: imagenet_c/{name} s3"] = _apply(get(f"imagenet_c/{name}"), severity=3)
    rows["baseline: encode PNG"] = _encode("PNG")
    rows["baseline: encode JPEG q85"] = _encode("JPEG", quality=85)

    print(f"{len(images)} photos at 224×224; {describe_threads(threads)}")
    print(f"{'row':40} {'CPU ms / sample':>16} {'samples/s':>10}")
    for name, fn in rows.items():

        def work(fn=fn) -> int:
            for seed, image in enumerate(images):
                fn(image, seed)
            return len(images)

        r = time_work(work, runs=args.repeats)
        print(f"{name:40} {1000 * r['cpu_s_per_image']:16.3f} {r['images_per_s']:10.0f}")


if __name__ == "__main__":
    main()
