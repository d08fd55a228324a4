#!/usr/bin/env python
"""Compare the images of two builds of one benchmark, member by member, per subset.

Contract between a CPU and a CUDA build (and between any two builds of one plan): every image member is byte-identical,
or, where float summation order differs between devices (FFT/convolution on the GPU), the decoded images differ by at
most one grey level. Prints one Markdown row per subset (members, identical, max |difference| in grey levels) and
exits 1 when the member lists differ or any difference exceeds ``--tolerance`` (default 1).

    python scripts/compare_builds.py BUILD_A BUILD_B [--tolerance 1]
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
from pathlib import Path

import numpy as np
from PIL import Image

from corruptgen.io.layout import image_field, split_member


def members(build: Path) -> dict[str, dict[str, bytes]]:
    """{subset: {tar member name: bytes}} of every shard under ``build/data``."""
    out: dict[str, dict[str, bytes]] = {}
    for shard in sorted((build / "data").rglob("*.tar")):
        subset = shard.parent.relative_to(build / "data").as_posix()
        with tarfile.open(shard) as tar:
            for info in tar:
                if info.isfile():
                    out.setdefault(subset, {})[info.name] = tar.extractfile(info).read()
    return out


def max_grey_difference(a: bytes, b: bytes) -> int:
    x = np.asarray(Image.open(io.BytesIO(a)).convert("RGB"), dtype=np.int16)
    y = np.asarray(Image.open(io.BytesIO(b)).convert("RGB"), dtype=np.int16)
    if x.shape != y.shape:
        return 255
    return int(np.abs(x - y).max())


def compare(a: Path, b: Path, tolerance: int = 1) -> tuple[list[str], bool]:
    """Markdown rows (one per subset) and whether the two builds meet the contract."""
    left, right = members(a), members(b)
    rows, ok = [], True
    for subset in sorted(set(left) | set(right)):
        la, lb = left.get(subset, {}), right.get(subset, {})
        images = sorted(n for n in set(la) | set(lb) if image_field(split_member(n)[1] or "") is not None)
        missing = [n for n in images if n not in la or n not in lb]
        same = sum(1 for n in images if n in la and n in lb and la[n] == lb[n])
        worst = max((max_grey_difference(la[n], lb[n]) for n in images if n in la and n in lb and la[n] != lb[n]),
                    default=0)  # fmt: skip
        good = not missing and worst <= tolerance
        ok &= good
        rows.append(f"| {subset} | {len(images)} | {same} | {worst} | {len(missing)} | {'ok' if good else 'FAIL'} |")
    if not rows:
        return ["| (no shards) | 0 | 0 | 0 | 0 | FAIL |"], False
    return rows, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--tolerance", type=int, default=1, help="largest allowed difference in grey levels (default 1)")
    args = ap.parse_args(argv)
    rows, ok = compare(args.a, args.b, args.tolerance)
    print("| subset | images | byte-identical | max abs diff (grey levels) | missing | verdict |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
