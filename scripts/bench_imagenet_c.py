#!/usr/bin/env python
"""Per-image throughput of the ImageNet-C corruptions vs a straightforward transcription of the reference, same run.

Ours: the registered ``imagenet_c/<name>`` (uint8 in, uint8 out, parameters resolved and recorded). Reference: the
per-image NumPy / scikit-image / SciPy / OpenCV transcription of hendrycks/robustness ``make_imagenet_c.py`` in
``tests/corruptions/imagenet_c_reference.py`` (glass blur: the literal per-pixel loop with one ``randint``-style draw
per visit; motion blur: ImageMagick's MotionBlurImage tap by tap). Both on astronaut, coffee, chelsea and rocket after
Resize(256) + CenterCrop(224), one thread (OpenCV and BLAS pinned), calls interleaved; images/s = 1 / the fastest
call (best of N, as ``timeit`` advises: on a shared machine the other calls measure the neighbours' load).

    python scripts/bench_imagenet_c.py [--severities 3,5] [--calls 12] [--names a,b] [--threads 1]
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
    parser.add_argument("--calls", type=int, default=12, help="timed calls per side (glass reference: a third)")
    parser.add_argument("--names", default="", help="comma-separated subset of corruptions")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import time

    import cv2
    import numpy as np
    import skimage.data

    from corruptgen.bench.baselines import imagenet_c_reference, imagenet_c_reference_fn
    from corruptgen.corruptions import get
    from corruptgen.families.imagenet_c import TABLES
    from corruptgen.preprocess import get_preprocess

    cv2.setNumThreads(args.threads)
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

    print(f"{'corruption':18s} sev {'ours img/s':>11s} {'ref img/s':>10s} {'ratio':>8s}")
    ratios = []
    for name in names:
        ours, theirs = get(f"imagenet_c/{name}"), reference_fn(name)
        for severity in severities:
            for k, img in enumerate(photos):  # warm-up (caches: frost textures, elastic matrices)
                ours.apply(img, k, severity=severity)
                if name != "glass_blur":
                    theirs(img, np.random.default_rng(k), severity)
            t_ours, t_ref = [], []
            ref_calls = max(args.calls // 3, 2) if name == "glass_blur" else args.calls
            for i in range(args.calls):
                img = photos[i % len(photos)]
                t0 = time.perf_counter()
                ours.apply(img, i, severity=severity)
                t_ours.append(time.perf_counter() - t0)
                if i < ref_calls:
                    t0 = time.perf_counter()
                    theirs(img, np.random.default_rng(i), severity)
                    t_ref.append(time.perf_counter() - t0)
            ips_ours, ips_ref = 1 / min(t_ours), 1 / min(t_ref)
            ratios.append(ips_ours / ips_ref)
            print(f"{name:18s} {severity:3d} {ips_ours:11.1f} {ips_ref:10.1f} {ips_ours / ips_ref:7.1f}x", flush=True)
    print(f"min ratio {min(ratios):.2f}x, geometric mean {float(np.exp(np.mean(np.log(ratios)))):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
