#!/usr/bin/env python
"""Per-image throughput of the ImageNet-C corruptions vs a straightforward transcription of the reference, same run.

Ours: the registered ``imagenet_c/<name>`` (uint8 in, uint8 out, parameters resolved and recorded). Reference: the
per-image NumPy / scikit-image / SciPy / OpenCV transcription of hendrycks/robustness ``make_imagenet_c.py`` in
``tests/corruptions/imagenet_c_reference.py`` (glass blur: the literal per-pixel loop with one ``randint``-style draw
per visit; motion blur: ImageMagick's MotionBlurImage tap by tap). Both on astronaut, coffee, chelsea and rocket after
Resize(256) + CenterCrop(224), one thread (OpenCV, torch and BLAS pinned, stated in the output). Each side is timed by
``corruptgen.bench.timing.time_work`` (one image per unit, cycling; warm-up, median of ``--repeats`` runs of >= 0.5 s,
CPU-seconds per image beside images/s), as ``corruptgen bench`` times baseline B.

    python scripts/bench_imagenet_c.py [--severities 3,5] [--repeats 3] [--names a,b] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--severities", default="3,5")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of >= 0.5 s per side; the median is printed")
    parser.add_argument("--names", default="", help="comma-separated subset of corruptions")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import numpy as np
    import skimage.data

    from corruptgen.bench.baselines import imagenet_c_reference, imagenet_c_reference_fn
    from corruptgen.bench.timing import describe_threads, fix_threads, time_work
    from corruptgen.corruptions import get
    from corruptgen.families.imagenet_c import TABLES
    from corruptgen.family.preprocess import get_preprocess

    threads = fix_threads(args.threads)
    pre = get_preprocess("imagenet")
    photos = [pre(getattr(skimage.data, n)()) for n in ("astronaut", "coffee", "chelsea", "rocket")]
    names = [n for n in args.names.split(",") if n] or list(TABLES)
    severities = [int(s) for s in args.severities.split(",")]

    ref = imagenet_c_reference()  # tests/corruptions/imagenet_c_reference.py (shared with `corruptgen bench`)
    if ref is None:
        print("the reference transcription tests/corruptions/imagenet_c_reference.py is not here", file=sys.stderr)
        return 1

    def reference_fn(name):
        return imagenet_c_reference_fn(ref, name)

    print(describe_threads(threads))
    print(f"{'corruption':18s} sev {'ours img/s':>11s} {'CPU-s/img':>9s} {'ref img/s':>10s} {'CPU-s/img':>9s} "
          f"{'ratio':>8s}")  # fmt: skip

    def cycling(call):
        """A time_work unit: ``call(image, k)`` on the next photo (k counts the calls); returns 1."""
        state = {"k": 0}

        def work() -> int:
            state["k"] += 1
            call(photos[state["k"] % len(photos)], state["k"])
            return 1

        return work

    ratios = []
    for name in names:
        ours, theirs = get(f"imagenet_c/{name}"), reference_fn(name)
        for sev in severities:
            a = time_work(
                cycling(lambda img, k, sev=sev, ours=ours: ours.apply(img, k, severity=sev)), runs=args.repeats
            )
            b = time_work(cycling(lambda img, k, sev=sev, theirs=theirs: theirs(img, np.random.default_rng(k), sev)),
                          runs=args.repeats)  # fmt: skip
            ratios.append(a["images_per_s"] / b["images_per_s"])
            print(
                f"{name:18s} {sev:3d} {a['images_per_s']:11.1f} {a['cpu_s_per_image']:9.4f} "
                f"{b['images_per_s']:10.1f} {b['cpu_s_per_image']:9.4f} {ratios[-1]:7.1f}x",
                flush=True,
            )
    print(f"min ratio {min(ratios):.2f}x, geometric mean {float(np.exp(np.mean(np.log(ratios)))):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
