#!/usr/bin/env python
"""Per-corruption images/s of corruptgen vs the peer packages imagecorruptions 1.1.2 and corrupt-tta 0.1.7, same images.

The peers need numpy < 2, so they run in their own virtual environment; this one script runs in both. ``all`` times
corruptgen here and each peer in ``--peer-python`` (a subprocess running ``run``), then prints one table:

    python -m venv /tmp/peers && /tmp/peers/bin/pip install "numpy<2" imagecorruptions==1.1.2 corrupt-tta==0.1.7
    python scripts/bench_peers.py all --peer-python /tmp/peers/bin/python --size 224 --severities 3

Inputs: astronaut, coffee, chelsea and rocket from scikit-image, shorter side resized (PIL bilinear) to
``size * 256 / 224`` and centre-cropped to ``size`` (the ImageNet-C protocol at 224; the same shape at 32 and 64).
corruptgen runs the family of that resolution (``imagenet-c`` at 224, ``tinyimagenet-c`` at 64, ``cifar10-c`` at
32, each with its reference script's constants; ``--family`` overrides); a peer has one set of constants for every
size. Every implementation returns a uint8 image (corrupt-tta's float result goes through ``np.uint8``, the reference's
cast). Timing: one thread (BLAS, OpenMP, OpenCV and torch pinned), one warm-up call per image, then 3 timed runs of at
least 0.5 s each cycling over the images; images/s is the median of the runs, CPU-s/img from ``process_time``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PHOTOS = ("astronaut", "coffee", "chelsea", "rocket")
NAMES = ("gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
         "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression",
         "speckle_noise", "gaussian_blur", "spatter", "saturate")  # fmt: skip
FAMILY_FOR_SIZE = {224: "imagenet-c", 64: "tinyimagenet-c", 32: "cifar10-c"}
RUNS, MIN_SECONDS = 3, 0.5
# deterministic given the image (no random draw): their outputs can be compared with the reference's exactly
DETERMINISTIC = ("defocus_blur", "brightness", "contrast", "pixelate", "jpeg_compression", "saturate")


def _pin_threads() -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = "1"


def _photos(size: int) -> list:
    import numpy as np
    import skimage.data
    from PIL import Image

    out = []
    for name in PHOTOS:
        img = Image.fromarray(getattr(skimage.data, name)()).convert("RGB")
        short = round(size * 256 / 224)
        w, h = img.size
        scale = short / min(w, h)
        img = img.resize((max(short, round(w * scale)), max(short, round(h * scale))), Image.BILINEAR)
        w, h = img.size
        left, top = (w - size) // 2, (h - size) // 2
        out.append(np.asarray(img.crop((left, top, left + size, top + size))))
    return out


def _functions(impl: str, family: str):
    """name -> f(image, call_index, severity) for one implementation; names it lacks are left out."""
    if impl == "corruptgen":
        import torch

        from corruptgen.corruptions import get

        torch.set_num_threads(1)
        prefix = family.replace("-", "_")
        funcs = {}
        for name in NAMES:
            try:
                corruption = get(f"{prefix}/{name}")
            except Exception:  # a corruption the family does not have
                continue
            funcs[name] = lambda img, i, s, c=corruption: c.apply(img, i, severity=s)[0]
        return funcs
    if impl == "imagecorruptions":
        from imagecorruptions import corrupt

        return {n: (lambda img, i, s, n=n: corrupt(img, severity=s, corruption_name=n)) for n in NAMES}
    if impl == "corrupt-tta":
        import corrupt_tta
        import numpy as np

        # corrupt-tta returns float arrays in [0, 255]; np.uint8 of it is the image (the reference's cast)
        funcs = corrupt_tta.corruption_dict.items()
        return {n: (lambda img, i, s, f=f: np.uint8(f(img, s))) for n, f in funcs if n in NAMES}
    raise SystemExit(f"unknown --impl {impl!r}")


def _time(fn, photos, severity: int) -> tuple[float, float]:
    """(median images/s, median CPU-s per image) of RUNS runs of at least MIN_SECONDS each."""
    for i, img in enumerate(photos):
        fn(img, i, severity)
    rates, cpus = [], []
    calls = 0
    for _ in range(RUNS):
        n, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            fn(photos[calls % len(photos)], calls, severity)
            n, calls = n + 1, calls + 1
            wall = time.perf_counter() - t0
            if wall >= MIN_SECONDS:
                break
        rates.append(n / wall)
        cpus.append((time.process_time() - c0) / n)
    return sorted(rates)[RUNS // 2], sorted(cpus)[RUNS // 2]


def run(impl: str, size: int, family: str | None, severities: list[int], names: list[str]) -> dict:
    _pin_threads()
    try:
        import cv2

        cv2.setNumThreads(1)
    except ImportError:
        pass
    family = family or FAMILY_FOR_SIZE.get(size, "imagenet-c")
    photos = _photos(size)
    funcs = _functions(impl, family)
    rows = {}
    for name in names:
        if name not in funcs:
            continue
        for s in severities:
            try:
                ips, cpu = _time(funcs[name], photos, s)
            except Exception as error:  # a peer broken by its dependencies (e.g. a newer scikit-image)
                rows[f"{name}/{s}"] = {"error": f"{type(error).__name__}: {error}"}
                print(f"{impl:16s} {size:4d} {name:18s} s{s} failed: {error}", file=sys.stderr)
                continue
            rows[f"{name}/{s}"] = {"img_s": ips, "cpu_s_per_img": cpu}
            print(f"{impl:16s} {size:4d} {name:18s} s{s} {ips:9.1f} img/s {cpu * 1e3:8.2f} ms CPU/img", file=sys.stderr)
    return {"impl": impl, "size": size, "family": family if impl == "corruptgen" else None, "rows": rows}


def outputs(impl: str, size: int, path: str) -> None:
    """Save ``impl``'s uint8 outputs (``np.uint8`` of the result, the reference's cast) of the DETERMINISTIC
    corruptions at severities 1..5 with ImageNet-C's constants (corruptgen: family ``imagenet-c``)."""
    import numpy as np

    photos = _photos(size)
    funcs = _functions(impl, "imagenet-c")
    arrays = {}
    for name in DETERMINISTIC:
        for s in range(1, 6):
            try:
                arrays[f"{name}/{s}"] = np.stack([np.uint8(funcs[name](img, i, s)) for i, img in enumerate(photos)])
            except Exception:  # a peer broken by its dependencies: no comparison
                continue
    np.savez(path, **arrays)


def fidelity(peer_python: str, size: int) -> str:
    """Markdown table: how far each peer's output is from corruptgen's (= the reference's, exact for these
    corruptions): share of differing uint8 values and the largest difference, over the photos and severities 1..5."""
    import tempfile

    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        mine = Path(tmp, "corruptgen.npz")
        outputs("corruptgen", size, str(mine))
        ours = dict(np.load(mine))
        head = "| corruption | peer | values that differ | max \\|diff\\| (grey levels) |"
        lines = [
            f"size {size}×{size}, ImageNet-C constants, severities 1–5, {len(PHOTOS)} photos",
            "",
            head,
            "|---" * 4 + "|",
        ]
        for impl in ("imagecorruptions", "corrupt-tta"):
            path = Path(tmp, f"{impl}.npz")
            cmd = [peer_python, __file__, "outputs", "--impl", impl, "--size", str(size), "--out", str(path)]
            subprocess.run(cmd, capture_output=True, text=True, check=True)
            theirs = dict(np.load(path))
            for name in DETERMINISTIC:
                keys = [f"{name}/{s}" for s in range(1, 6) if f"{name}/{s}" in theirs]
                if not keys:
                    continue
                diff = np.concatenate([np.abs(ours[k].astype(int) - theirs[k].astype(int)).ravel() for k in keys])
                lines.append(f"| {name} | {impl} | {100 * np.mean(diff > 0):.2f} % | {diff.max()} |")
    return "\n".join(lines)


def table(results: list[dict], before: dict | None = None) -> str:
    """One Markdown table: images/s and CPU-ms per image of each implementation, and corruptgen's speed relative to
    the fastest peer in CPU time (on a shared machine wall time measures the neighbours too; CPU time much less).
    ``before``: an earlier corruptgen result, shown as a first column with its own ratio to the same peers."""
    import math

    ours = next(r for r in results if r["impl"] == "corruptgen")
    peers = [r for r in results if r["impl"] != "corruptgen"]
    impls = [ours, *peers]
    cols = " | ".join(f"{r['impl']} img/s (CPU ms)" for r in impls)
    head = f"| corruption/severity | {cols} | vs fastest peer |"
    if before:
        before = {**before, "impl": "corruptgen before"}
        impls = [before, *impls]
        ratios = "before vs fastest peer | now vs fastest peer"
        head = f"| corruption/severity | corruptgen before img/s (CPU ms) | {cols} | {ratios} |"
    lines = [f"size {ours['size']}×{ours['size']}, corruptgen family {ours['family']}, one thread", "", head,
             "|" + "---|" * (len(impls) + 2 + bool(before))]  # fmt: skip
    logs = []
    for key, row in ours["rows"].items():
        cells, peer_cpu = [], []
        for r in impls:
            cell = r["rows"].get(key)
            if cell and "error" in cell:
                cells.append("fails¹")
                continue
            cells.append(f"{cell['img_s']:.1f} ({1e3 * cell['cpu_s_per_img']:.2f})" if cell else "–")
            if cell and r in peers:
                peer_cpu.append(cell["cpu_s_per_img"])
        ratio = min(peer_cpu) / row["cpu_s_per_img"] if peer_cpu and "error" not in row else None
        if ratio:
            logs.append(math.log(ratio))
        if before:
            old = before["rows"].get(key, {})
            old_ratio = min(peer_cpu) / old["cpu_s_per_img"] if peer_cpu and "cpu_s_per_img" in old else None
            cells.append(f"{old_ratio:.2f}×" if old_ratio else "–")
        lines.append(f"| {key} | " + " | ".join(cells) + (f" | {ratio:.2f}× |" if ratio else " | – |"))
    errors = sorted({f"{r['impl']} {k.split('/')[0]}: {c['error']}" for r in impls for k, c in r["rows"].items()
                     if "error" in c})  # fmt: skip
    if errors:
        lines.append("\n¹ " + "; ".join(errors))
    if logs:
        lines.append(f"\ngeometric mean vs the fastest peer (CPU time): {math.exp(sum(logs) / len(logs)):.2f}× "
                     f"(slowest {math.exp(min(logs)):.2f}×)")  # fmt: skip
    return "\n".join(lines)


def _as_list(value: dict | list) -> list[dict]:
    return value if isinstance(value, list) else [value]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["run", "all", "table", "outputs", "fidelity"])
    parser.add_argument("files", nargs="*", help="table: result JSON files")
    parser.add_argument("--impl", default="corruptgen")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--family", default=None)
    parser.add_argument("--severities", default="3")
    parser.add_argument("--names", default=",".join(NAMES))
    parser.add_argument("--peer-python", default=None, help="python of the virtual environment holding the peers")
    parser.add_argument("--out", default=None, help="write the JSON results here")
    parser.add_argument("--before", default=None, help="table: an earlier JSON whose corruptgen column is compared")
    args = parser.parse_args()
    severities = [int(s) for s in args.severities.split(",")]
    names = [n for n in args.names.split(",") if n]
    if args.mode == "run":
        result = run(args.impl, args.size, args.family, severities, names)
        text = json.dumps(result)
        Path(args.out).write_text(text) if args.out else print(text)
        return 0
    if args.mode == "outputs":
        outputs(args.impl, args.size, args.out)
        return 0
    if args.mode == "fidelity":
        print(fidelity(args.peer_python, args.size))
        return 0
    if args.mode == "table":
        runs = [run for f in args.files for run in _as_list(json.loads(Path(f).read_text()))]
        before = None
        if args.before:
            before = next(r for r in _as_list(json.loads(Path(args.before).read_text())) if r["impl"] == "corruptgen")
        print(table(runs, before))
        return 0
    results = [run("corruptgen", args.size, args.family, severities, names)]
    if args.peer_python:
        for impl in ("imagecorruptions", "corrupt-tta"):
            cmd = [args.peer_python, __file__, "run", "--impl", impl, "--size", str(args.size),
                   "--severities", args.severities, "--names", ",".join(names)]  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{impl} failed:\n{done.stderr[-2000:]}")
            results.append(json.loads(done.stdout))
    if args.out:
        Path(args.out).write_text(json.dumps(results))
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
