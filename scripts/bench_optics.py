#!/usr/bin/env python
"""Throughput of the batched PSF convolution vs the reference's per-image, per-channel ``conv2d`` loop, same run.

The OpticsBench reference generator (spec opticsbench.md §4) filters one image and one colour channel at a time
(``F.conv2d(img[:, c:c+1], kernel[:, c:c+1], padding='same')``). Ours filters a whole batch with per-image kernels in
one call (:func:`corruptgen.families.opticsbench.conv.psf_conv`, FFT for 25×25). Also timed: the float64 corruption path
(``batch_fn``: uint8 in, quantised uint8 out) and the end-to-end engine (``build opticsbench``: decode, preprocess,
20 subsets + clean, JPEG, shards). Medians of ``--repeats``.

    python scripts/bench_optics.py [--images 64] [--repeats 5] [--device cpu|cuda] [--engine-images 64] [--threads N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import skimage.data
import torch
from PIL import Image

from corruptgen.bench.baselines import conv2d_loop
from corruptgen.corruptions import get
from corruptgen.engine import render
from corruptgen.families.opticsbench.conv import psf_conv
from corruptgen.families.opticsbench.corruptions import load_stack
from corruptgen.plan import SourceSpec
from corruptgen.preprocess import get_preprocess

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field", "immunohistochemistry")
PUBLISHED = Path(__file__).resolve().parents[2] / "shared/reference/opticsbench/kernel_stack_iccvw.pt"


def photos(n: int) -> np.ndarray:
    """n real photographs after Resize(256) + CenterCrop(224), mirrored on alternate rounds: (n, 224, 224, 3) uint8."""
    pre = get_preprocess("imagenet")
    out = []
    for i in range(n):
        arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()[..., :3]
        out.append(pre(np.ascontiguousarray(arr[:, ::-1] if (i // len(PHOTOS)) % 2 else arr)))
    return np.stack(out)


def timed(fn: Callable[[], object], repeats: int, device: str) -> float:
    """Median seconds of ``repeats`` calls after one warm-up call."""
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


reference_loop = conv2d_loop  # the reference's per-image, per-channel conv2d (corruptgen.bench.baselines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=64, help="batch size of the convolution benchmark (default 64)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument("--kernels", default=str(PUBLISHED) if PUBLISHED.is_file() else "opticsbench")
    ap.add_argument("--engine-images", type=int, default=64, help="inputs of the end-to-end build (0: skip)")
    ap.add_argument("--workers", type=int, default=1, help="engine worker processes")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = args.device

    stack, meta = load_stack(args.kernels)
    images = photos(args.images)
    rng = np.random.default_rng(0)
    index = rng.integers(0, stack.shape[0], size=len(images))  # one of the 8 aberrations per image, severity 3
    kernels = torch.from_numpy(stack[index, 2]).to(dev)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous().to(dev).float().div(255)
    n = len(images)
    print(f"{n} images 224x224, kernels {meta['source']} ({meta['sha256'][:12]}), device {dev}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads, median of {args.repeats}")  # fmt: skip

    ref = reference_loop(x, kernels)
    for method in ("fft", "direct"):
        err = (psf_conv(x, kernels, method=method) - ref).abs().max().item()
        print(f"  max |{method} - reference loop| = {err:.2e}")
    t = {
        "loop": timed(lambda: reference_loop(x, kernels), max(1, args.repeats // 2), dev),
        "auto": timed(lambda: psf_conv(x, kernels), args.repeats, dev),
        "fft": timed(lambda: psf_conv(x, kernels, method="fft"), args.repeats, dev),
        "direct": timed(lambda: psf_conv(x, kernels, method="direct"), args.repeats, dev),
        "fft64": timed(lambda: psf_conv(x.double(), kernels.double(), method="fft"), args.repeats, dev),
    }
    coma = get("optics/coma")
    opts = dict(severity=3, kernels=args.kernels)

    def corrupt(shift: list[int]) -> None:  # a different batch each call: no spectrum reuse
        shift[0] += 1
        coma.batch_fn(np.roll(images, shift[0], axis=0), [np.random.default_rng(i) for i in range(n)], device=dev,
                      **opts)  # fmt: skip

    t["batch_fn"] = timed(lambda s=[0]: corrupt(s), args.repeats, dev)

    def corrupt_same() -> None:  # the same batch each call: the engine's next subset reuses the image spectrum
        coma.batch_fn(images, [np.random.default_rng(i) for i in range(n)], device=dev, **opts)

    t["batch_fn_cached"] = timed(corrupt_same, args.repeats, dev)
    rows = [
        ("reference per-image, per-channel conv2d loop (float32)", "loop"),
        ("psf_conv batched, method=auto (float32)", "auto"),
        ("psf_conv batched FFT (float32)", "fft"),
        ("psf_conv batched direct grouped conv2d (float32)", "direct"),
        ("psf_conv batched FFT (float64)", "fft64"),
        ("corruption batch_fn, uint8 -> uint8 (float64 FFT)", "batch_fn"),
        ("  same, image spectrum reused (next subset, same batch)", "batch_fn_cached"),
    ]
    for label, key in rows:
        print(f"{label:58s} {n / t[key]:9.1f} img/s  ({t['loop'] / t[key]:6.1f}x the loop)")

    if args.engine_images > 0:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            for i in range(args.engine_images):
                arr = getattr(skimage.data, PHOTOS[i % len(PHOTOS)])()[..., :3]
                arr = np.ascontiguousarray(arr[:, ::-1] if (i // len(PHOTOS)) % 2 else arr)
                Image.fromarray(arr).save(src / f"img_{i:05d}.jpg", quality=95)
            from corruptgen.family import get_benchmark

            plan = get_benchmark("opticsbench").plan(source=SourceSpec(f"imagefolder:{src}"), kernels=args.kernels)
            out = Path(tmp) / "out"
            times = []
            for _ in range(max(1, args.repeats // 2)):
                shutil.rmtree(out, ignore_errors=True)
                t0 = time.perf_counter()
                render(plan, out, workers=args.workers, progress=False, device=dev)
                times.append(time.perf_counter() - t0)
            te = statistics.median(times)
            subsets = len(plan.subsets)
            print(f"engine build opticsbench: {args.engine_images} inputs x {subsets} subsets (20 + clean), "
                  f"--workers {args.workers}: {args.engine_images * subsets / te:.1f} samples/s, "
                  f"{args.engine_images * (subsets - 1) / te:.1f} corrupted img/s, "
                  f"{args.engine_images / te:.2f} inputs/s")  # fmt: skip


if __name__ == "__main__":
    main()
