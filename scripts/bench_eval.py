"""Benchmark ``corruptgen eval`` against a bare forward loop, in the same run.

Builds a small Syn2Nat set from the scikit-image samples (or uses ``--build``), then alternates, ``--repeats`` times:

* bare: the model's forward pass over the same images, pre-decoded and pre-normalised into float batches;
* eval: ``corruptgen.eval.evaluate`` on the build (streams the shards through ``datasets``, decodes JPEGs, batches,
  predicts, computes every metric, writes results and predictions), model already loaded.

Prints images/s of both (medians) and the overhead ratio eval time / bare time (goal: <= 1.10 at batch 64 on CPU
with the default model).

    python scripts/bench_eval.py --images 192 --batch-size 64 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import corruptgen
from corruptgen.bench.baselines import bare_forward, decoded_build_images, normalised_batches
from corruptgen.eval import EvalModel, evaluate, load_model


def _build(tmp: Path, images: int) -> Path:
    per_subset = 8
    n_subsets = max(1, -(-images // per_subset) - 1)  # + clean
    from corruptgen.corruptions import list_corruptions

    names = [c.name for c in list_corruptions("syn2nat")][:n_subsets]
    corruptgen.build("syn2nat", out=tmp, subsets=",".join(names), limit=per_subset)
    return tmp / "syn2nat"


def _decoded(build: Path, size: int) -> list[np.ndarray]:
    return decoded_build_images(build, size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=None, help="an existing build directory (default: build one)")
    ap.add_argument("--images", type=int, default=192, help="images when building (default 192)")
    ap.add_argument("--model", default="efficientnet_lite0")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        build = Path(args.build) if args.build else _build(Path(tmp) / "build", args.images)
        model = load_model(args.model, args.device)
        images = _decoded(build, model.input_size)
        n = len(images)
        batches = normalised_batches(images, model, args.batch_size, args.device)
        forward = model.forward
        with torch.inference_mode():
            forward(batches[0][:2])  # warm-up

        bare, full, loop = [], [], []
        for r in range(args.repeats):
            bare.append(bare_forward(forward, batches, args.device))
            t0 = time.perf_counter()
            run = evaluate(build, [model], out=Path(tmp) / f"res{r}", device=args.device, batch_size=args.batch_size,
                           workers=args.workers, report=False, verify=False)  # fmt: skip
            full.append(time.perf_counter() - t0)
            loop.append(run.results[0]["eval"]["seconds"])
            assert run.results[0]["eval"]["images"] == n
            print(f"repeat {r + 1}: bare {n / bare[-1]:.1f} img/s, eval {n / full[-1]:.1f} img/s "
                  f"(loop only {n / loop[-1]:.1f} img/s)", flush=True)  # fmt: skip

        null = EvalModel(name="null", spec="null", forward=lambda x: torch.zeros(len(x), 1000, device=x.device),
                         num_classes=1000, mean=model.mean, std=model.std, input_size=model.input_size)  # fmt: skip
        pipe = []
        for r in range(args.repeats):
            t0 = time.perf_counter()
            evaluate(build, [null], out=Path(tmp) / f"null{r}", device=args.device, batch_size=args.batch_size,
                     workers=args.workers, report=False, verify=False)  # fmt: skip
            pipe.append(time.perf_counter() - t0)

    b, f, lo = statistics.median(bare), statistics.median(full), statistics.median(loop)
    paired = statistics.median(fi / bi for fi, bi in zip(full, bare, strict=True))
    p = statistics.median(pipe)
    print(f"\n{n} images, batch {args.batch_size}, {args.workers} workers, device {args.device}, "
          f"torch threads {torch.get_num_threads()}, model {model.name}")  # fmt: skip
    print(f"bare forward loop : {n / b:8.1f} images/s (median of {args.repeats})")
    print(f"corruptgen eval   : {n / f:8.1f} images/s  (whole evaluate(): read, decode, predict, metrics, write)")
    print(f"  of which loop   : {n / lo:8.1f} images/s  (read, decode, predict)")
    print(f"pipeline, no model: {n / p:8.1f} images/s  ({1000 * p / n:.1f} ms per image: read, decode, metrics, write)")
    print(f"overhead ratio    : {f / b:.3f}x (medians), {paired:.3f}x (median of paired repeats), "
          f"{(b + p) / b:.3f}x (bare + pipeline) — goal <= 1.10")  # fmt: skip


if __name__ == "__main__":
    main()
