#!/usr/bin/env python
"""Check brightness/saturate's uint8 fast paths against the reference's float64 skimage formulas on all 2²⁴ colours:
the exact kernel (``imagenet_c/_hsv.py``) and the colour table built from it (``imagenet_c/_hsv_table.py``).

    python scripts/check_hsv_exhaustive.py            # every severity of every ImageNet-C-style family
    python scripts/check_hsv_exhaustive.py --quick    # every 3rd value per channel (86³ colours)

Prints one line per parameter set (colours compared, colours where the kernel / the table differ, seconds) and
exits 1 on any difference. About 15 s per parameter set on one core; the test suite checks a smaller colour set on
every run.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from corruptgen.corruptions import get
from corruptgen.families.imagenet_c import _hsv, _hsv_table, digital, weather

FAMILIES = ("imagenet_c", "cifar10_c", "cifar100_c", "tinyimagenet_c", "imagenet64_c")


def _parameter_sets() -> list[tuple[str, tuple[float, ...]]]:
    out = set()
    for family in FAMILIES:
        for row in get(f"{family}/brightness").params["severities"].values():
            out.add(("brightness", (float(row["delta"]),)))
        for row in get(f"{family}/saturate").params["severities"].values():
            out.add(("saturate", (float(row["scale"]), float(row["shift"]))))
    return sorted(out)


def _compare(name: str, args: tuple[float, ...], step: int) -> tuple[int, int, int]:
    values = np.arange(0, 256, step, dtype=np.uint8)
    params = (args[0], 1.0, 0.0) if name == "brightness" else (0.0, *args)
    slow = weather.brightness if name == "brightness" else digital.saturate
    table = _hsv_table.build_table(params)
    compared = kernel_differ = table_differ = 0
    for red in values:  # one red value at a time: 65,536 colours per call at step 1
        g, b = np.meshgrid(values, values, indexing="ij")
        image = np.stack([np.full_like(g, red), g, b], -1)
        expected = np.uint8(np.clip(slow(image / 255.0, *args), 0, 1) * 255)
        kernel = _hsv.hsv_adjust_uint8(image, value_shift=params[0], sat_scale=params[1], sat_shift=params[2])
        kernel_differ += int(np.any(kernel != expected, axis=-1).sum())
        packed = table[int(red) | (g.astype(np.uint32) << 8) | (b.astype(np.uint32) << 16)]
        table_differ += int(np.any(packed.view(np.uint8).reshape(*g.shape, 4)[..., :3] != expected, axis=-1).sum())
        compared += g.size
    return compared, kernel_differ, table_differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="every 3rd value per channel")
    args = parser.parse_args()
    failed = False
    for name, params in _parameter_sets():
        start = time.perf_counter()
        compared, kernel, table = _compare(name, params, 3 if args.quick else 1)
        failed |= kernel + table > 0
        print(f"{name:10s} {params!s:14s} colours {compared:>10,d}  differ: kernel {kernel:>6,d}, table {table:>6,d}  "
              f"{time.perf_counter() - start:6.1f} s", flush=True)  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
