#!/usr/bin/env python
"""A CIFAR-10-C render end to end: ``corruptgen build cifar10-c`` of N CIFAR-sized images, then the export to the
released array layout, timed as a user runs them.

CIFAR-10-C is made from CIFAR-10's 10,000 test images, so the full render is 10,000 × (95 + clean) = 960,000 samples.
CIFAR-10 itself is not downloaded: the inputs (``images.npy``) are random square crops of the 10 scikit-image sample
photos BOX-resized to 32×32 (seed 0), ``labels.npy`` the photo index. Each command runs in its own process
(``OMP_NUM_THREADS=1``); the script prints wall clock, user and system CPU (``getrusage`` of the children: the build's
worker processes included), the largest resident set of one process, samples per second and CPU-ms per sample, the
sizes of the shards and of the exported arrays, and checks the export as RobustBench's ``load_cifar10c`` slices it
(every ``<corruption>.npy`` 5·N × 32 × 32 × 3 uint8, ``labels.npy`` the source labels tiled 5 times).

    python scripts/bench_cifar_render.py [--images 10000] [--workers 2] [--runs 2] [--out docs/bench/cifar_render.json]
        [--doc docs/benchmarks.md,docs/cifar_c.md]
    python scripts/bench_cifar_render.py table docs/bench/cifar_render.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import child_env, describe_machine, machine, publish

from corruptgen.bench.timing import run_child

REGION = "cifar-render"
PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "stereo_motorcycle", "hubble_deep_field",
          "immunohistochemistry", "retina", "camera", "clock")  # fmt: skip
PAGES = "docs/benchmarks.md,docs/cifar_c.md"


def make_inputs(folder: Path, n: int) -> str:
    import numpy as np
    import skimage.data
    from PIL import Image

    rng = np.random.default_rng(0)
    photos = []
    for name in PHOTOS:
        photo = getattr(skimage.data, name)()
        photos.append(Image.fromarray(photo[0] if name == "stereo_motorcycle" else photo).convert("RGB"))
    images, labels = np.empty((n, 32, 32, 3), np.uint8), np.empty(n, np.int64)
    for i in range(n):
        label = i % len(photos)
        photo = photos[label]
        side = int(rng.integers(32, min(photo.size) + 1))
        x, y = rng.integers(0, photo.width - side + 1), rng.integers(0, photo.height - side + 1)
        images[i] = np.asarray(photo.crop((x, y, x + side, y + side)).resize((32, 32), Image.Resampling.BOX))
        labels[i] = label
    np.save(folder / "images.npy", images)
    np.save(folder / "labels.npy", labels)
    return f"npy:{folder / 'images.npy'}:{folder / 'labels.npy'}"


def timed(argv: list[str], tmp: Path) -> dict:
    """One ``corruptgen`` command in a fresh process: wall, user and system CPU, largest RSS of one process, its last
    line of output (paths inside ``tmp`` relative)."""
    child = run_child([sys.executable, "-m", "corruptgen", *argv], env=child_env())
    done = child.done
    if done.returncode != 0:
        raise SystemExit(f"corruptgen {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return {"wall_s": round(child.wall_s, 1), "user_s": round(child.user_s, 1), "sys_s": round(child.sys_s, 1),
            "max_rss_mib": round(child.max_rss_kib / 1024),
            "output": (done.stdout + done.stderr).strip().splitlines()[-1].replace(f"{tmp}/", "")}  # fmt: skip


def _bytes(folder: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in folder.rglob(pattern))


def measure(n: int, workers: int, runs: int) -> dict:
    import shutil

    import numpy as np

    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="cifar-render-", dir=os.environ.get("TMPDIR")) as tmp:
        tmp = Path(tmp)
        source = make_inputs(tmp, n)
        timings = []
        for _ in range(runs):
            shutil.rmtree(tmp / "out", ignore_errors=True)
            shutil.rmtree(tmp / "export", ignore_errors=True)
            build = timed(["build", "cifar10-c", "--source", source, "--workers", str(workers), "--out",
                           str(tmp / "out"), "--no-progress"], tmp)  # fmt: skip
            export = timed(["export", str(tmp / "out/cifar10-c"), "--layout", "cifar-c", "--out",
                            str(tmp / "export")], tmp)  # fmt: skip
            timings.append({"build": build, "export": export})
        manifest = json.loads((tmp / "out/cifar10-c/manifest.json").read_text())
        arrays = sorted(p.name for p in (tmp / "export").glob("*.npy"))
        labels = np.load(tmp / "export/labels.npy")
        fog = np.load(tmp / "export/fog.npy", mmap_mode="r")
        checks = {"arrays": len(arrays), "fog_shape": list(fog.shape), "fog_dtype": str(fog.dtype),
                  "labels_tiled": bool(np.array_equal(labels, np.tile(np.load(tmp / "labels.npy"), 5)))}  # fmt: skip
        sizes = {"shards": _bytes(tmp / "out", "*.tar"), "export": _bytes(tmp / "export", "*.npy")}
    load.append(os.getloadavg()[0])
    return {"machine": machine(load), "images": n, "workers": workers, "samples": manifest["counts"]["samples"],
            "shards": len(manifest["shards"]), "runs": timings, "checks": checks, "bytes": sizes,
            "source": "random square crops of the 10 scikit-image sample photos, BOX-resized to 32×32"}  # fmt: skip


def _spread(runs: list[dict]) -> str:
    """How far apart the runs were (build CPU and wall of each later run ÷ the first's)."""
    if len(runs) < 2:
        return "One run."
    first = runs[0]["build"]
    cpu = first["user_s"] + first["sys_s"]
    parts = [
        f"run {i + 2}: CPU {(r['build']['user_s'] + r['build']['sys_s']) / cpu:.2f}×, wall "
        f"{r['build']['wall_s'] / first['wall_s']:.2f}× the first"
        for i, r in enumerate(runs[1:])
    ]
    return f"{len(runs)} runs of the build; {'; '.join(parts)}."


def table(result: dict) -> str:
    runs = result.get("runs") or [{"build": result["build"], "export": result["export"]}]
    b, e, n = runs[0]["build"], runs[0]["export"], result["images"]
    cpu = b["user_s"] + b["sys_s"]
    c = result["checks"]
    scale = "the full CIFAR-10-C size" if n == 10_000 else f"{n:,} images, not CIFAR-10's 10,000: a smaller run"
    return "\n".join([
        f"{n:,} CIFAR-sized inputs ({scale}; {result['source']}), all 19 corruptions × 5 severities + clean, "
        f"`--workers {result['workers']}`, `OMP_NUM_THREADS=1`; {describe_machine(result['machine'])}",
        "",
        "```text",
        f"$ corruptgen build cifar10-c --source npy:images.npy:labels.npy --workers {result['workers']} --out out",
        b["output"],
        f"{b['user_s']:.1f} s user + {b['sys_s']:.1f} s sys, {b['wall_s']:.1f} s wall, largest process "
        f"{b['max_rss_mib']} MiB",
        "$ corruptgen export out/cifar10-c --layout cifar-c --out cifar10c-export",
        e["output"],
        f"{e['user_s']:.1f} s user + {e['sys_s']:.1f} s sys, {e['wall_s']:.1f} s wall",
        "```",
        "",
        f"Build: {result['samples'] / b['wall_s']:,.0f} samples/s wall, {1e3 * cpu / result['samples']:.2f} CPU-ms per "
        f"sample (PNG encode, tar, manifest and card included); {result['bytes']['shards'] / 1e9:.2f} GB of shards in "
        f"{result['shards']} shards, {result['bytes']['export'] / 1e6:.0f} MB of arrays ({c['arrays']} files; "
        f"`fog.npy` {' × '.join(map(str, c['fog_shape']))} {c['fog_dtype']}, `labels.npy` the source labels tiled "
        f"5×: {'yes' if c['labels_tiled'] else 'NO'}). {_spread(runs)}",
    ])  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--images", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=2, help="builds and exports, one after the other (default 2)")
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--doc", default=None, help=f"comma-separated pages to write the region into (e.g. {PAGES})")
    args = ap.parse_args()
    result = (
        json.loads(Path(args.files[0]).read_text())
        if args.mode == "table"
        else measure(args.images, args.workers, args.runs)
    )
    publish(result, table(result), REGION, args.out if args.mode == "run" else None, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
