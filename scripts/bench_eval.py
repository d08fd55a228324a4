"""Benchmark ``corruptgen eval`` against a bare forward loop, in the same run.

Builds a small Syn2Nat set from the scikit-image samples (or uses ``--build``), then times, each with
``corruptgen.bench.timing.time_work`` (warm-up, median of ``--repeats`` runs of >= 0.5 s, CPU-seconds per image;
``--threads`` torch/OpenCV threads, stated in the output):

* bare: the model's forward pass over the same images, pre-decoded and pre-normalised into float batches;
* eval: ``corruptgen.eval.evaluate`` on the build (streams the shards through ``datasets``, decodes JPEGs, batches,
  predicts, computes every metric, writes results and predictions), model already loaded;
* pipeline: the same ``evaluate`` with a model that returns zeros (everything but the forward pass).

Prints images/s of both (medians) and the overhead ratio eval time / bare time (goal: <= 1.10 at batch 64 on CPU
with the default model).

    python scripts/bench_eval.py --images 192 --batch-size 64 --repeats 3 --threads 1
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import torch

import corruptgen
from corruptgen.bench.baselines import bare_forward, decoded_build_images, normalised_batches
from corruptgen.bench.timing import describe_threads, fix_threads, time_work
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
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of >= 0.5 s; the median is printed")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op and OpenCV threads (default 1)")
    args = ap.parse_args()
    threads = fix_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        build = Path(args.build) if args.build else _build(Path(tmp) / "build", args.images)
        model = load_model(args.model, args.device)
        images = _decoded(build, model.input_size)
        n = len(images)
        batches = normalised_batches(images, model, args.batch_size, args.device)
        forward = model.forward
        runs = {"count": 0}

        def counted(fn):
            return lambda: (fn(), n)[1]

        def one_evaluate(m) -> None:
            runs["count"] += 1
            run = evaluate(build, [m], out=Path(tmp) / f"res{runs['count']}", device=args.device,
                           batch_size=args.batch_size, workers=args.workers, report=False, verify=False)  # fmt: skip
            assert run.results[0]["eval"]["images"] == n

        null = EvalModel(name="null", spec="null", forward=lambda x: torch.zeros(len(x), 1000, device=x.device),
                         num_classes=1000, mean=model.mean, std=model.std, input_size=model.input_size)  # fmt: skip
        timing = dict(runs=args.repeats, sync=torch.cuda.synchronize if args.device.startswith("cuda") else None)
        bare = time_work(counted(lambda: bare_forward(forward, batches, args.device)), **timing)
        full = time_work(counted(lambda: one_evaluate(model)), **timing)
        pipe = time_work(counted(lambda: one_evaluate(null)), **timing)

    b, f, p = bare["images_per_s"], full["images_per_s"], pipe["images_per_s"]
    print(f"\n{n} images, batch {args.batch_size}, {args.workers} workers, device {args.device}, model {model.name}; "
          f"median of {args.repeats} runs >= 0.5 s after a warm-up")  # fmt: skip
    print(describe_threads(threads))
    print(f"bare forward loop : {b:8.1f} images/s  {bare['cpu_s_per_image']:.4f} CPU-s/img")
    print(f"corruptgen eval   : {f:8.1f} images/s  {full['cpu_s_per_image']:.4f} CPU-s/img (whole evaluate(): read, "
          "decode, predict, metrics, write)")  # fmt: skip
    print(f"pipeline, no model: {p:8.1f} images/s  ({1000 / p:.1f} ms per image: read, decode, metrics, write)")
    print(f"overhead ratio    : {b / f:.3f}x (medians), {(1 / b + 1 / p) * b:.3f}x (bare + pipeline) — goal <= 1.10")


if __name__ == "__main__":
    main()
