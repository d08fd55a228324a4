#!/usr/bin/env python
"""When an exact colour table pays for brightness and saturate: the constants ``_hsv_table`` decides with.

Measures, in one process with one thread (OpenCV and BLAS pinned) and the render processes' allocator policy:

* the CPU-seconds of one table build (``_hsv_table.build_table``: the exact kernel on all 2²⁴ colours), median of
  ``--builds`` builds, for brightness and saturate at severity 3;
* the CPU-seconds per call of the exact kernel (``_hsv.hsv_adjust_uint8``) and of the table's gather
  (``_hsv_table.apply_table``) on ``--crops`` distinct images of 32 to 448 px (random square crops of ten
  scikit-image photos, bilinear-resized; a gather touches the table's cache lines of each image's colours, so
  distinct images are what a build sees, four photos cycled would keep those lines in cache), each timed by
  ``corruptgen.bench.timing.time_work`` (warm-up, median of 3 runs of >= ``--min-seconds``);
* the least-squares line ``a + b · pixels`` of each, and the images after which a table pays
  (build ÷ (kernel − gather) per call), measured and as the constants in ``_hsv_table`` give it.

    python scripts/bench_hsv_table.py [--builds 3] [--min-seconds 0.5] [--out docs/bench/hsv_table.json \\
        --doc docs/benchmarks.md]
    python scripts/bench_hsv_table.py table docs/bench/hsv_table.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import describe_machine, machine, publish

REGION = "hsv-table"
SIZES = (32, 64, 128, 224, 448)
#: severity 3 of ImageNet-C: (value_shift, sat_scale, sat_shift)
PARAMS = {"brightness": (0.3, 1.0, 0.0), "saturate": (0.0, 2.0, 0.0)}
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "retina", "hubble_deep_field", "immunohistochemistry", "cat",
          "colorwheel", "logo")  # fmt: skip


def _fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """``a + b · x`` through ``(x, y)`` points by least squares on the relative error (weights ``1 / y²``: the
    small images, where a call's fixed cost counts, weigh as much as the large ones)."""
    w = [1.0 / (y * y) for _, y in points]
    sw = sum(w)
    mx = sum(wi * x for wi, (x, _) in zip(w, points, strict=True)) / sw
    my = sum(wi * y for wi, (_, y) in zip(w, points, strict=True)) / sw
    sxy = sum(wi * (x - mx) * (y - my) for wi, (x, y) in zip(w, points, strict=True))
    sxx = sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, points, strict=True))
    return my - sxy / sxx * mx, sxy / sxx


def measure(builds: int, min_seconds: float, crops: int) -> dict:
    os.environ.update({v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
    import numpy as np
    import skimage.data
    from PIL import Image

    from corruptgen.alloc import tune_allocator
    from corruptgen.bench.timing import describe_threads, fix_threads, time_work
    from corruptgen.families.imagenet_c import _hsv, _hsv_table

    threads = describe_threads(fix_threads(1))
    tune_allocator()
    load = [os.getloadavg()[0]]
    build_s = {}
    tables = {}
    for name, params in PARAMS.items():
        cpu = []
        for _ in range(builds):
            c0 = time.process_time()
            tables[name] = _hsv_table.build_table(params)
            cpu.append(time.process_time() - c0)
        build_s[name] = statistics.median(cpu)
    photos = [np.asarray(Image.fromarray(getattr(skimage.data, n)()).convert("RGB")) for n in PHOTOS]
    rows = []
    for size in SIZES:
        rng = np.random.default_rng(0)
        images = [_crop(photos[i % len(photos)], size, rng) for i in range(crops)]
        for name, (value_shift, sat_scale, sat_shift) in PARAMS.items():
            exact = functools.partial(_hsv.hsv_adjust_uint8, value_shift=value_shift, sat_scale=sat_scale,
                                      sat_shift=sat_shift)  # fmt: skip
            kernel = time_work(_cycling(images, exact), min_seconds=min_seconds)
            gather = time_work(_cycling(images, lambda im, t=tables[name]: _hsv_table.apply_table(im, t)),
                               min_seconds=min_seconds)  # fmt: skip
            equal = all(np.array_equal(_hsv_table.apply_table(im, tables[name]), exact(im)) for im in images)
            rows.append({"size": size, "corruption": name, "kernel_s": kernel["cpu_s_per_image"],
                         "gather_s": gather["cpu_s_per_image"], "equal": equal})  # fmt: skip
            print(f"{size:4d} {name:10s} kernel {1e3 * rows[-1]['kernel_s']:.3f} ms, gather "
                  f"{1e3 * rows[-1]['gather_s']:.3f} ms", file=sys.stderr, flush=True)  # fmt: skip
    load.append(os.getloadavg()[0])
    code = {k: getattr(_hsv_table, k) for k in ("BUILD_S", "KERNEL_CALL_S", "KERNEL_PIXEL_S", "GATHER_CALL_S",
                                                 "GATHER_PIXEL_S")}  # fmt: skip
    return {
        "build_s": build_s,
        "rows": rows,
        "threads": threads,
        "code": code,
        "crops": crops,
        "machine": machine(load),
    }


def _cycling(images: list, call):
    """A ``time_work`` unit: ``call`` on the next image; returns 1."""
    state = {"k": 0}

    def work() -> int:
        state["k"] += 1
        call(images[state["k"] % len(images)])
        return 1

    return work


def _crop(photo, size: int, rng):
    """A random square crop (30-90 % of the shorter side) of ``photo``, bilinear-resized to ``size``."""
    import numpy as np
    from PIL import Image

    h, w = photo.shape[:2]
    side = int(min(h, w) * rng.uniform(0.3, 0.9))
    y, x = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
    img = Image.fromarray(photo[y : y + side, x : x + side]).resize((size, size), Image.Resampling.BILINEAR)
    return np.ascontiguousarray(np.asarray(img))


def table(result: dict) -> str:
    build = statistics.fmean(result["build_s"].values())
    kernel = _fit([(r["size"] ** 2, r["kernel_s"]) for r in result["rows"]])
    gather = _fit([(r["size"] ** 2, r["gather_s"]) for r in result["rows"]])
    code = result["code"]

    def pays(per_call_saved: float) -> str:
        return f"{build / per_call_saved:,.0f}" if per_call_saved > 0 else "never"

    lines = [
        f"{result['crops']} distinct images per size, one thread, the render processes' allocator policy; "
        f"{result['threads']}; "
        f"{describe_machine(result['machine'])}",
        "",
        "table build (the exact kernel on all 2²⁴ colours, median of the builds): "
        + ", ".join(f"{name} {s:.3f} CPU-s" for name, s in result["build_s"].items()),
        "",
        "| size | corruption | exact kernel (CPU ms/image) | table gather (CPU ms/image) | speed-up | same bytes "
        "| table pays after (images, measured) | the code's threshold (images) |",
        "|---" * 8 + "|",
    ]
    for r in result["rows"]:
        pixels = r["size"] ** 2
        coded = (code["KERNEL_CALL_S"] - code["GATHER_CALL_S"] + (code["KERNEL_PIXEL_S"] - code["GATHER_PIXEL_S"])
                 * pixels) / code["BUILD_S"]  # fmt: skip
        lines.append(f"| {r['size']} | {r['corruption']} | {1e3 * r['kernel_s']:.3f} | {1e3 * r['gather_s']:.3f} | "
                     f"{r['kernel_s'] / r['gather_s']:.1f}× | {'yes' if r['equal'] else '**no**'} | "
                     f"{pays(r['kernel_s'] - r['gather_s'])} | {int(-(-1 // coded)):,} |")  # fmt: skip
    lines += [
        "",
        f"fitted per call: kernel {1e6 * kernel[0]:.1f} µs + {1e9 * kernel[1]:.2f} ns/pixel, gather "
        f"{1e6 * gather[0]:.1f} µs + {1e9 * gather[1]:.2f} ns/pixel, build {build:.3f} s; in "
        f"`corruptgen/families/imagenet_c/_hsv_table.py`: kernel {1e6 * code['KERNEL_CALL_S']:.1f} µs + "
        f"{1e9 * code['KERNEL_PIXEL_S']:.2f} ns/pixel, gather {1e6 * code['GATHER_CALL_S']:.1f} µs + "
        f"{1e9 * code['GATHER_PIXEL_S']:.2f} ns/pixel, build {code['BUILD_S']:.3f} s",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", default="run", choices=["run", "table"])
    parser.add_argument("files", nargs="*", help="table: a saved result")
    parser.add_argument("--builds", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=0.5)
    parser.add_argument("--crops", type=int, default=256, help="distinct images per size")
    parser.add_argument("--out", default=None)
    parser.add_argument("--doc", default=None)
    args = parser.parse_args()
    if args.mode == "table":
        print(table(json.loads(Path(args.files[0]).read_text())))
        return 0
    result = measure(args.builds, args.min_seconds, args.crops)
    publish(result, table(result), REGION, args.out, args.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
