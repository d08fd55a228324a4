"""Benchmark corruptgen's PGD against torchattacks 3.5.1's, in the same run, on the same model, images and batch.

PGD-10 (ε = 0.04, step ε/10, no random start), EfficientNet-Lite0 (the default model) behind its (x − 0.5) / 0.5
normalisation, float32, one batch of the sample photographs (cycled to ``--batch-size``) at 224×224. Each side is
timed with ``corruptgen.bench.timing.time_work`` (a warm-up, then runs of at least 0.5 s, CPU-seconds per image;
``--threads`` torch threads, stated in the output), the two sides' runs interleaved (ours, theirs, theirs, ours, ...)
so that a change in the machine's load hits both; the medians over ``--repeats`` runs are printed. Also timed: the
float64 path the ``adversarial`` family crafts with (not part of the ratio: torchattacks has no such mode). The batch
is timed in both memory layouts a caller may hold (NCHW-contiguous, as a DataLoader's default collate gives, and
channels-last, as a permuted NHWC array): corruptgen hands the model channels-last input on the CPU either way,
torchattacks uses the layout it is given. Prints a Markdown table for docs/benchmarks.md.

    python scripts/bench_attacks.py --batch-size 8 --repeats 3 --threads 1
    python scripts/bench_attacks.py --device cuda --batch-size 64
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
import torch

from corruptgen.attacks import Classifier, pgd
from corruptgen.bench.timing import describe_threads, fix_threads, time_work
from corruptgen.family.preprocess import get_preprocess
from corruptgen.io.sources import open_source
from corruptgen.models import load_model


def _photos(n: int) -> torch.Tensor:
    """``n`` sample photographs (cycled), ImageNet-preprocessed to 224², as float (n, 3, 224, 224) on [0, 1]."""
    from corruptgen.io.decode import decode_image

    source, pre = open_source("samples"), get_preprocess("imagenet")
    images = [pre(decode_image(source.read(i))[0]) for i in range(len(source))]
    batch = np.stack([images[i % len(images)] for i in range(n)])
    return torch.from_numpy(batch).permute(0, 3, 1, 2).float() / 255


class _Normalised(torch.nn.Module):
    """What torchattacks attacks: the network behind its normalisation, on [0, 1] images."""

    def __init__(self, net: torch.nn.Module, mean, std) -> None:
        super().__init__()
        self.net = net
        self.register_buffer("mean", torch.tensor(mean).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(std).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net((x - self.mean) / self.std)


def _interleaved(sides: dict, repeats: int, sync) -> dict[str, dict]:
    """Per side: the medians of ``repeats`` single timed runs, taken in turns (forward, then backward order)."""
    runs: dict[str, list[dict]] = {label: [] for label in sides}
    for r in range(repeats):
        for label in list(sides) if r % 2 == 0 else list(sides)[::-1]:
            runs[label].append(time_work(sides[label], runs=1, warmup=r == 0, sync=sync))
    return {label: {k: statistics.median(run[k] for run in rs) for k in ("images_per_s", "cpu_s_per_image")}
            for label, rs in runs.items()}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of >= 0.5 s; the median is printed")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--no-float64", dest="float64", action="store_false", help="skip the float64 line")
    args = ap.parse_args()
    threads = fix_threads(args.threads)
    device, n, eps, steps = args.device, args.batch_size, 0.04, 10
    model = load_model("efficientnet_lite0", device)
    ours = Classifier(model)
    x = _photos(n).to(device)
    with torch.no_grad():
        labels = ours(x).argmax(1)
    # the same batch in the two layouts a caller may hold: NCHW-contiguous (what a DataLoader's default collate of
    # CHW tensors gives) and channels-last (a permuted NHWC array); corruptgen hands the model channels-last either way
    layouts = {"NCHW": x.contiguous(), "channels-last": x.contiguous(memory_format=torch.channels_last)}
    try:
        import torchattacks
    except ImportError:
        torchattacks = None
    net = _Normalised(model.module, model.mean, model.std).to(device).eval()
    attack = torchattacks and torchattacks.PGD(net, eps=eps, alpha=eps / steps, steps=steps, random_start=False)
    sides = {}
    for layout, batch in layouts.items():
        sides[f"corruptgen `pgd`, {layout} input"] = lambda b=batch: (pgd(ours, b, labels, eps, steps), n)[1]
        if attack is not None:
            sides[f"torchattacks 3.5.1 `PGD`, {layout} input"] = lambda b=batch: (attack(b, labels), n)[1]
    if args.float64:
        model64 = load_model("efficientnet_lite0", device)
        model64.module.to(dtype=torch.float64)
        wide, x64 = Classifier(model64, torch.float64), x.double()
        sides["corruptgen `pgd`, float64 (as builds craft)"] = lambda: (pgd(wide, x64, labels, eps, steps), n)[1]
    rows = _interleaved(sides, args.repeats, torch.cuda.synchronize if device.startswith("cuda") else None)
    ratios = ["torchattacks not installed (`bash scripts/install.sh test`)"]
    if attack is not None:
        ratios = []
        for layout in layouts:
            mine, theirs = rows[f"corruptgen `pgd`, {layout} input"], rows[f"torchattacks 3.5.1 `PGD`, {layout} input"]
            ratios.append(f"{layout} input **{mine['images_per_s'] / theirs['images_per_s']:.2f}×** wall clock, "
                          f"{theirs['cpu_s_per_image'] / mine['cpu_s_per_image']:.2f}× per CPU-second")  # fmt: skip
    name = torch.cuda.get_device_name(0) if device.startswith("cuda") else threads["cpu_capability"]
    print(f"PGD-10 (eps 0.04, no random start), EfficientNet-Lite0 224², batch {n}, device {device} ({name}); "
          f"median of {args.repeats} runs >= 0.5 s after a warm-up")  # fmt: skip
    print(describe_threads(threads))
    print("\n| attack | samples/s | CPU-s per sample |\n|---|---|---|")
    for label, r in rows.items():
        print(f"| {label} | {r['images_per_s']:.2f} | {r['cpu_s_per_image']:.3f} |")
    print(f"\ncorruptgen / torchattacks: {'; '.join(ratios)}")


if __name__ == "__main__":
    main()
