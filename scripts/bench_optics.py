#!/usr/bin/env python
"""Throughput of the batched PSF convolution vs the reference's per-image, per-channel ``conv2d`` loop, same run.

The OpticsBench reference generator ``generate_datasets.py`` filters one image and one colour channel at a time
(``F.conv2d(img[:, c:c+1], kernel[:, c:c+1], padding='same')``). Ours filters a whole batch with per-image kernels in
one call (:func:`corruptgen.families.opticsbench.conv.psf_conv`, FFT for 25×25). Also timed: the float64 corruption path
(``batch_fn``: uint8 in, quantised uint8 out) and the end-to-end engine (``build opticsbench``: decode, preprocess,
20 subsets + clean, JPEG, shards). Every row is timed by :func:`corruptgen.bench.timing.time_work` (warm-up, median
of ``--repeats`` runs of >= ``--min-seconds`` each, CPU-seconds per image), with the thread settings printed; the
loop is :func:`corruptgen.bench.baselines.conv2d_loop_work`, exactly what ``corruptgen bench`` times as baseline D.

    python scripts/bench_optics.py [--images 64] [--repeats 3] [--device cpu|cuda] [--engine-images 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np
import skimage.data
import torch
from PIL import Image

from corruptgen.bench.baselines import conv2d_loop, conv2d_loop_work
from corruptgen.bench.timing import describe_threads, fix_threads, time_work
from corruptgen.corruptions import get
from corruptgen.engine.run import render
from corruptgen.families.opticsbench.conv import psf_conv
from corruptgen.families.opticsbench.corruptions import load_stack
from corruptgen.family.plan import SourceSpec
from corruptgen.family.preprocess import get_preprocess

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry")


def photos(n: int) -> np.ndarray:
    """n real photographs after Resize(256) + CenterCrop(224), mirrored on alternate rounds: (n, 224, 224, 3) uint8."""
    pre = get_preprocess("imagenet")
    out = []
    for i in range(n):
        arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()[..., :3]
        out.append(pre(np.ascontiguousarray(arr[:, ::-1] if (i // len(PHOTOS)) % 2 else arr)))
    return np.stack(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=64, help="batch size of the convolution benchmark (default 64)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs; the median is printed (default 3)")
    ap.add_argument("--min-seconds", type=float, default=0.5, help="each timed run lasts at least this long")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument(
        "--kernels",
        default="opticsbench",
        help="a kernel stack: opticsbench (the bundled one, default) or a published kernel_stack_*.pt",
    )
    ap.add_argument("--engine-images", type=int, default=64, help="inputs of the end-to-end build (0: skip)")
    ap.add_argument("--workers", type=int, default=1, help="engine worker processes")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenCV threads (default 1)")
    args = ap.parse_args()
    threads = fix_threads(args.threads)
    dev = args.device
    sync = torch.cuda.synchronize if dev.startswith("cuda") else None
    timing = dict(runs=args.repeats, min_seconds=args.min_seconds, sync=sync)

    stack, meta = load_stack(args.kernels)
    images = photos(args.images)
    rng = np.random.default_rng(0)
    index = rng.integers(0, stack.shape[0], size=len(images))  # one of the 8 aberrations per image, severity 3
    kernels = torch.from_numpy(stack[index, 2]).to(dev)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous().to(dev).float().div(255)
    n = len(images)
    print(
        f"{n} images 224x224, kernels {meta['source']} ({meta['sha256'][:12]}), device {dev}, "
        f"torch {torch.__version__}, median of {args.repeats} runs >= {args.min_seconds} s after a warm-up"
    )
    print(describe_threads(threads))

    ref = conv2d_loop(x[:2], kernels[:2])  # the first two images: the loop can take seconds per image
    for method in ("fft", "direct"):
        err = (psf_conv(x[:2], kernels[:2], method=method) - ref).abs().max().item()
        print(f"  max |{method} - reference loop| = {err:.2e} (first 2 images)")

    def batch(fn):
        return lambda: (fn(), n)[1]

    t = {
        "loop": time_work(conv2d_loop_work(x, kernels, sync), **timing),
        "auto": time_work(batch(lambda: psf_conv(x, kernels)), **timing),
        "fft": time_work(batch(lambda: psf_conv(x, kernels, method="fft")), **timing),
        "direct": time_work(batch(lambda: psf_conv(x, kernels, method="direct")), **timing),
        "fft64": time_work(batch(lambda: psf_conv(x.double(), kernels.double(), method="fft")), **timing),
    }
    coma = get("optics/coma")
    opts = dict(severity=3, kernels=args.kernels)

    def corrupt(shift: list[int]) -> None:  # a different batch each call: no spectrum reuse
        shift[0] += 1
        coma.batch_fn(np.roll(images, shift[0], axis=0), [np.random.default_rng(i) for i in range(n)], device=dev,
                      **opts)  # fmt: skip

    t["batch_fn"] = time_work(batch(lambda s=[0]: corrupt(s)), **timing)

    def corrupt_same() -> None:  # the same batch each call: the engine's next subset reuses the image spectrum
        coma.batch_fn(images, [np.random.default_rng(i) for i in range(n)], device=dev, **opts)

    t["batch_fn_cached"] = time_work(batch(corrupt_same), **timing)
    rows = [
        ("reference per-image, per-channel conv2d loop (float32)", "loop"),
        ("psf_conv batched, method=auto (float32)", "auto"),
        ("psf_conv batched FFT (float32)", "fft"),
        ("psf_conv batched direct grouped conv2d (float32)", "direct"),
        ("psf_conv batched FFT (float64)", "fft64"),
        ("corruption batch_fn, uint8 -> uint8 (float64 FFT)", "batch_fn"),
        ("  same, image spectrum reused (next subset, same batch)", "batch_fn_cached"),
    ]
    loop = t["loop"]["images_per_s"]
    for label, key in rows:
        r = t[key]
        print(f"{label:58s} {r['images_per_s']:9.1f} img/s {r['cpu_s_per_image']:8.4f} CPU-s/img "
              f"({r['images_per_s'] / loop:6.1f}x the loop)")  # fmt: skip

    if args.engine_images > 0:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            for i in range(args.engine_images):
                arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()[..., :3]
                arr = np.ascontiguousarray(arr[:, ::-1] if (i // len(PHOTOS)) % 2 else arr)
                Image.fromarray(arr).save(src / f"img_{i:05d}.jpg", quality=95)
            from corruptgen.family.benchmark import get_benchmark

            plan = get_benchmark("opticsbench").plan(source=SourceSpec(f"imagefolder:{src}"), kernels=args.kernels)
            out = Path(tmp) / "out"
            subsets = len(plan.subsets)

            def one_build() -> int:
                shutil.rmtree(out, ignore_errors=True)
                render(plan, out, workers=args.workers, progress=False, device=dev)
                return args.engine_images * subsets

            rec = time_work(one_build, runs=args.repeats, min_seconds=args.min_seconds, warmup=False)
            te = args.engine_images * subsets / rec["images_per_s"]
            print(f"engine build opticsbench: {args.engine_images} inputs x {subsets} subsets (20 + clean), "
                  f"--workers {args.workers}: {args.engine_images * subsets / te:.1f} samples/s, "
                  f"{args.engine_images * (subsets - 1) / te:.1f} corrupted img/s, "
                  f"{args.engine_images / te:.2f} inputs/s; CPU-s per sample {rec['cpu_s_per_image']:.4f} "
                  f"(this process only: --workers > 1 adds the workers' CPU time)")  # fmt: skip


if __name__ == "__main__":
    main()
