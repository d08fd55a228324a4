#!/usr/bin/env python
"""End-to-end CPU per sample of a build against its floor and its corruptions (issue O: "builds run at the floor").

For each family, on the same inputs, CPU-seconds (``time.process_time``: user + system, every thread of the process)
per sample, each measured in a fresh process with one thread (``OMP_NUM_THREADS=1``, OpenCV 1 thread):

* **end to end**: ``corruptgen.build(family, ...)`` into an empty folder, as a user runs it (``--workers 1``, the
  dataset card included), timed from ``import corruptgen`` to its return; numpy, OpenCV and PIL are imported before
  the clock starts, in every measurement alike, and modules load from compiled files (both trees are compiled first
  and ``PYTHONDONTWRITEBYTECODE`` is unset, as for a package pip installed). Once with this tree and once with
  ``--baseline`` (a git ref, default: this branch's merge-base with ``main``, exported with ``git archive`` and put
  first on ``PYTHONPATH``): *before* and *after* in the same run;
* **floor**: what any script that writes the same outputs must do: read + decode + resize every input (PIL decode and
  the family's preprocessing; an ``npy`` row is copied out of the memory-mapped array), encode every output sample
  (the build's format and quality) and write it as one tar member (``tarfile.TarInfo.tobuf`` header, data, padding)
  into one tar file per subset and chunk, fsync'ed, as the build's shards are;
* **corruption**: the corruption calls alone (``Corruption.apply`` of every subset on every decoded input, the
  generators made before the clock starts; the first call of a corruption includes the import of the library it
  uses, as in any script), with the render processes' allocator policy (``corruptgen.alloc``).

The floor and the corruption calls run in one process, each stage timed apart, in the cheapest order: chunk by chunk,
its inputs decoded once, then subset by subset.

Measurements are interleaved: ``--rounds`` rounds, in each of which every family's three measurements (before, after,
floor + corruption) run in turn; the table gives the medians and the range of ``end to end ÷ (floor + corruption)``
over the rounds. Inputs: ``imagenet-c`` and ``syn2nat`` read a folder of JPEG files (q90 crops of four scikit-image
photos, shorter side 375 px, as ImageNet's validation images are about), ``cifar10-c`` an ``npy:`` array of 32×32
crops of the same photos. The build sizes are ``--images`` per family (default: 14, 200 and 200 inputs: 1,064, 3,800
and 19,200 samples). What a build costs once (imports, plan, manifest, dataset card: about 0.5-1 CPU-s, more than
all its samples in a 1,000-sample Syn2Nat build) is measured too, as a 1-input build less its floor and corruption,
and shown beside the ratio with that part taken out.

    python scripts/bench_floor.py [--rounds 3] [--baseline REF] [--families imagenet-c,syn2nat,cifar10-c]
        [--out docs/bench/floor.json] [--doc docs/benchmarks.md]
    python scripts/bench_floor.py table docs/bench/floor.json        # the table of a saved run again
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, child_env, describe_machine, export_tree, machine, publish

FAMILIES = {"imagenet-c": 14, "syn2nat": 200, "cifar10-c": 200}  # inputs per family (>= 1,000 samples each)
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")
REGION = "floor"


# ------------------------------------------------------------------------------------------------ inputs


def make_inputs(folder: Path, images: int, small: int) -> dict[str, str]:
    """The sources: ``images`` JPEG files (q90, shorter side 375 px) and an ``npy:`` array of ``small`` 32×32
    crops, both from random crops of four scikit-image photos (seed 0)."""
    import numpy as np
    import skimage.data
    from PIL import Image

    rng = np.random.default_rng(0)
    photos = [getattr(skimage.data, name)() for name in PHOTOS]
    (folder / "jpg").mkdir(parents=True)

    def crop(i: int, share: float) -> Image.Image:
        photo = photos[i % len(photos)]
        h, w = photo.shape[:2]
        ch, cw = int(h * share), int(w * share)
        y, x = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
        return Image.fromarray(photo[y : y + ch, x : x + cw])

    for i in range(images):
        img = crop(i, 0.8)
        scale = 375 / min(img.size)
        img = img.resize((round(img.width * scale), round(img.height * scale)), Image.Resampling.BOX)
        img.save(folder / "jpg" / f"img_{i:05d}.jpg", quality=90)
    small_images = np.stack([np.asarray(crop(i, 0.4).resize((32, 32), Image.Resampling.BOX)) for i in range(small)])
    np.save(folder / "img.npy", small_images)
    np.save(folder / "lab.npy", rng.integers(0, 10, small))
    return {"jpg": f"imagefolder:{folder / 'jpg'}", "npy": f"npy:{folder / 'img.npy'}:{folder / 'lab.npy'}"}


# ------------------------------------------------------------------------------------------------ workers


def _pin() -> None:
    import cv2

    cv2.setNumThreads(1)


def worker_e2e(family: str, source: str, limit: int, out: str) -> dict:
    """``corruptgen.build`` in this (fresh) process: CPU-seconds from ``import corruptgen`` to its return."""
    import cv2  # noqa: F401  (imported before the clock in every measurement alike)
    import numpy  # noqa: F401
    from PIL import Image  # noqa: F401

    _pin()
    start = time.process_time()
    import corruptgen

    result = corruptgen.build(family, source=source, limit=limit, out=out, progress=False)
    seconds = time.process_time() - start
    return {"seconds": seconds, "samples": result.manifest["counts"]["samples"], "module": corruptgen.__file__}


def worker_parts(family: str, source: str, limit: int, out: str) -> dict:
    """The floor (decode + resize, encode, tar) and the corruption calls of the same build, timed apart: chunk by
    chunk, its inputs decoded once, then subset by subset (the cheapest order: a corruption's code and tables stay in
    the CPU caches; ~30 % less CPU at 32 px than input by input)."""
    import tarfile

    import numpy as np

    from corruptgen.alloc import tune_allocator
    from corruptgen.api import make_plan
    from corruptgen.corruptions import get
    from corruptgen.engine.chunk import sample_kwargs
    from corruptgen.io.codec import encode_image
    from corruptgen.io.decode import decode_image
    from corruptgen.io.layout import shard_relpath
    from corruptgen.seeding import sample_rng

    _pin()
    tune_allocator()
    plan = make_plan(family, source=source, limit=limit)
    spec, clock = plan.source.spec, time.process_time
    if spec.startswith("npy:"):
        array = np.load(spec[4:].split(":")[0], mmap_mode="r")
        keys = [f"{i:08d}" for i in range(min(limit, len(array)))]

        def load(i: int) -> np.ndarray:
            return plan.preprocess(np.ascontiguousarray(array[i]), max_pixels=plan.max_pixels)
    else:
        paths = sorted(Path(spec.split(":", 1)[1]).iterdir())[:limit]
        keys = [p.stem for p in paths]

        def load(i: int) -> np.ndarray:
            return plan.preprocess(decode_image(paths[i].read_bytes())[0], max_pixels=plan.max_pixels)

    subsets = [(s, get(s.corruption) if s.corruption else None, dict(s.options)) for s in plan.subsets]
    seconds = {"decode + resize": 0.0, "corruption": 0.0, "encode": 0.0, "tar": 0.0}
    samples, fmt = 0, plan.image_format
    for chunk, first in enumerate(range(0, len(keys), plan.shard_size)):
        indices = range(first, min(first + plan.shard_size, len(keys)))
        t0 = clock()
        images = [load(i) for i in indices]
        seconds["decode + resize"] += clock() - t0
        for subset, corruption, options in subsets:
            path = Path(out) / shard_relpath(subset.name, chunk, plan.split)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as f:
                for i, image in zip(indices, images, strict=True):
                    name = subset.sample_keys(keys[i])[0]
                    output = image
                    if corruption is not None:
                        rng = sample_rng(plan.seed, plan.benchmark, subset.name, name)[1]
                        extra = sample_kwargs(corruption, plan, subset, keys[i], i, 0)
                        t0 = clock()
                        output = corruption.apply(image, rng, **options, **extra)[0]
                        seconds["corruption"] += clock() - t0
                    t0 = clock()
                    data = encode_image(output, fmt, plan.quality)
                    t1 = clock()
                    info = tarfile.TarInfo(f"{name}.{fmt}")
                    info.size = len(data)
                    f.write(info.tobuf(tarfile.USTAR_FORMAT))
                    f.write(data)
                    f.write(bytes(-len(data) % 512))
                    seconds["encode"] += t1 - t0
                    seconds["tar"] += clock() - t1
                    samples += 1
                t0 = clock()
                f.write(bytes(1024))
                f.flush()
                os.fsync(f.fileno())
            seconds["tar"] += clock() - t0
    return {"seconds": seconds, "samples": samples}


def run_worker(mode: str, family: str, source: str, limit: int, pythonpath: Path | None) -> dict:
    """One measurement in a fresh process (``pythonpath``: the baseline tree first on ``PYTHONPATH``)."""
    env = child_env(pythonpath)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # modules load from their compiled files, as in an installed package
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as out:
        cmd = [sys.executable, __file__, "_worker", mode, family, source, str(limit), str(Path(out) / "build")]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=out)
    if done.returncode != 0:
        raise SystemExit(f"{mode} {family} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------ run and table


def measure(families: dict[str, int], rounds: int, baseline: str) -> dict:
    load = [os.getloadavg()[0]]
    runs: dict[str, dict[str, list]] = {f: {k: [] for k in ("before", "after", "parts", "after 1", "parts 1")}
                                        for f in families}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        tmp = Path(tmp)
        sources = make_inputs(tmp / "inputs", max(families.get(f, 0) for f in ("imagenet-c", "syn2nat")) or 1,
                              families.get("cifar10-c", 1))  # fmt: skip
        before = export_tree(baseline, tmp)
        for tree in (before, ROOT / "corruptgen"):  # both compiled once, as pip compiles an installed package
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True, capture_output=True)
        for r in range(rounds):
            for family, n in families.items():
                source = sources["npy" if family.startswith("cifar") else "jpg"]
                order = [("before", before, n), ("after", None, n), ("parts", None, n), ("after 1", None, 1),
                         ("parts 1", None, 1)]  # fmt: skip
                for name, tree, inputs in order[r % 5 :] + order[: r % 5]:  # another first measurement each round
                    mode = "parts" if name.startswith("parts") else "e2e"
                    runs[family][name].append(run_worker(mode, family, source, inputs, tree))
                    print(f"round {r + 1} {family} {name}: {runs[family][name][-1]}", file=sys.stderr, flush=True)
    load.append(os.getloadavg()[0])
    return {"machine": machine(load), "baseline": baseline, "rounds": rounds, "families": runs,
            "commit": _commit(), "python": sys.version.split()[0]}  # fmt: skip


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def _commit() -> str:
    return _git("describe", "--always", "--dirty")


def table(result: dict) -> str:
    """Markdown: per family, ms of CPU per sample (medians over the rounds) and the ratios with their range."""
    lines = [
        f"CPU ms per sample (user + system, one thread, fresh process per measurement; median of {result['rounds']} "
        f"interleaved rounds); {describe_machine(result['machine'])}; before = `{result['baseline']}`, after = "
        f"this tree ({result['commit']})",
        "",
        "| family | samples | decode + resize | encode | tar | floor | corruption | floor + corruption "
        "| end to end before | end to end after | after ÷ (floor + corruption) | range over rounds | before ÷ (floor + "
        "corruption) | once per build (CPU-s) | after, once-per-build part taken out |",
        "|---" * 15 + "|",
    ]
    for family, runs in result["families"].items():
        samples = runs["parts"][0]["samples"]
        ms = {k: [1e3 * p["seconds"][k] / samples for p in runs["parts"]] for k in runs["parts"][0]["seconds"]}
        floor = [ms["decode + resize"][i] + ms["encode"][i] + ms["tar"][i] for i in range(len(runs["parts"]))]
        base = [floor[i] + ms["corruption"][i] for i in range(len(floor))]
        after = [1e3 * e["seconds"] / e["samples"] for e in runs["after"]]
        before = [1e3 * e["seconds"] / e["samples"] for e in runs["before"]]
        ratios = [a / b for a, b in zip(after, base, strict=True)]
        med = statistics.median
        # what a build costs once (imports, plan, manifest, card): a 1-input build less its floor + corruption
        once = med([e["seconds"] - sum(p["seconds"].values()) for e, p in zip(runs["after 1"], runs["parts 1"],
                                                                              strict=True)])  # fmt: skip
        per_sample = (med(after) * samples / 1e3 - once) / samples * 1e3
        lines.append(
            f"| {family} | {samples:,} | {med(ms['decode + resize']):.3f} | {med(ms['encode']):.3f} | "
            f"{med(ms['tar']):.3f} | {med(floor):.3f} | {med(ms['corruption']):.3f} | {med(base):.3f} | "
            f"{med(before):.3f} | {med(after):.3f} | **{med(after) / med(base):.2f}×** | "
            f"{min(ratios):.2f}–{max(ratios):.2f}× | {med(before) / med(base):.2f}× | {once:.2f} | "
            f"{per_sample / med(base):.2f}× |"
        )
    return "\n".join(lines)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        mode, family, source, limit, out = sys.argv[2:7]
        worker = worker_e2e if mode == "e2e" else worker_parts
        print(json.dumps(worker(family, source, int(limit), out)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*", help="table: a saved result")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", default=None, help="git ref measured as 'before' (default: merge-base with main)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--images", default=None, help="inputs per family, comma-separated in --families order")
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--doc", default=None, help="also write the table into this page's region 'floor'")
    args = ap.parse_args()
    if args.mode == "table":
        result = json.loads(Path(args.files[0]).read_text())
    else:
        names = [f for f in args.families.split(",") if f]
        counts = [int(n) for n in args.images.split(",")] if args.images else [FAMILIES[f] for f in names]
        baseline = args.baseline or _git("merge-base", "HEAD", "main")[:12]
        result = measure(dict(zip(names, counts, strict=True)), args.rounds, baseline)
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
